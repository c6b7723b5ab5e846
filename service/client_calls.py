"""HTTP calls the CLI and the demo make to a running service: the one place that builds their
HTTP clients (URL and API key from the settings), and the attribution calls."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import httpx
from memtrace_client import MemTraceClient
from rich.progress import track
from rich.table import Table

from service.settings import get_settings


def _auth_headers() -> dict[str, str]:
    key = get_settings().api_key
    return {"Authorization": f"Bearer {key.get_secret_value()}"} if key else {}


def service_client(url: str | None, timeout_s: float = 300) -> httpx.Client:
    """An HTTP client for the service at ``url`` (``MEMTRACE_URL`` by default) that sends the
    CLI's API key (``MEMTRACE_API_KEY``) when one is set."""
    return httpx.Client(
        base_url=url or get_settings().url, timeout=timeout_s, headers=_auth_headers()
    )


def batch_client(url: str | None) -> MemTraceClient:
    """The SDK's client for sending batches: its retries (connection errors, 429, 5xx) and
    error types are the CLI's too."""
    key = get_settings().api_key
    return MemTraceClient(
        url or get_settings().url,
        api_key=key.get_secret_value() if key else None,
        timeout_s=120,
        attempts=6,
    )


class ServiceRequestError(RuntimeError):
    """The service refused or failed a CLI request; the message carries its explanation.
    ``usage`` is True when the caller asked for something wrong (400, 404, 422)."""

    def __init__(self, message: str, *, usage: bool) -> None:
        super().__init__(message)
        self.usage = usage


def checked(response: httpx.Response) -> Any:
    """The JSON of a 200; otherwise ``ServiceRequestError`` with the service's message and, for
    validation problems, where each one is."""
    if response.status_code == 200:
        return response.json()
    message = response.text[:2000]
    try:
        body = response.json()
    except ValueError:
        body = None
    if isinstance(body, dict) and "message" in body:
        message = str(body["message"])
        details = body.get("details")
        if isinstance(details, list):
            message += "".join(
                f"\n  {'.'.join(map(str, d.get('loc', [])))}: {d.get('msg', '')}"
                for d in details
                if isinstance(d, dict)
            )
    usage = response.status_code in (400, 404, 422)
    raise ServiceRequestError(f"HTTP {response.status_code}: {message}", usage=usage)


def failed_case_ids(client: httpx.Client, project: str) -> list[str]:
    """Every failed case of the project, paging through ``GET /cases``."""
    ids: list[str] = []
    while True:
        page = checked(
            client.get(
                "/cases",
                params={
                    "project": project,
                    "verdict": "failed",
                    "skip": len(ids),
                    "limit": 1000,
                },
            )
        )
        ids += [c["id"] for c in page]
        if len(page) < 1000:
            return ids


def attribute_cases(
    client: httpx.Client, project: str, case_id: str | None, judge: str, refresh: bool
) -> list[dict[str, Any]]:
    """Attribute one case, or every failed case when ``case_id`` is None (with progress)."""
    ids = [case_id] if case_id else failed_case_ids(client, project)
    body = {"judge": judge, "refresh": refresh}
    params = {"project": project}
    steps = track(ids, description="attributing", transient=True) if len(ids) > 1 else ids
    return [
        checked(client.post(f"/attribute/{quote(cid, safe='')}", params=params, json=body))
        for cid in steps
    ]


def attribution_table(results: list[dict[str, Any]]) -> Table:
    """Attribution results as a table for the terminal."""
    table = Table("case", "status", "error type", "operation", "conf.", "reason")
    for r in results:
        op = r.get("operation") or {}
        table.add_row(
            r["case_id"],
            r["status"],
            r.get("error_type") or "-",
            op.get("id", "-"),
            f"{r['confidence']:.2f}",
            r["reason"],
        )
    return table
