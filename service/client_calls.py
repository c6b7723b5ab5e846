"""HTTP calls the CLI and the demo make to a running service: the one place that builds their
HTTP clients (URL and API key from the settings), and the attribution calls."""

from __future__ import annotations

from typing import Any

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


class AttributionRequestError(RuntimeError):
    """The service refused an attribution request; the message carries its explanation."""


def _checked(response: httpx.Response) -> Any:
    if response.status_code != 200:
        try:
            message = response.json().get("message", response.text)
        except ValueError:
            message = response.text
        raise AttributionRequestError(f"HTTP {response.status_code}: {message}")
    return response.json()


def failed_case_ids(client: httpx.Client, project: str) -> list[str]:
    """Every failed case of the project, paging through ``GET /cases``."""
    ids: list[str] = []
    while True:
        page = _checked(
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
    steps = track(ids, description="attributing", transient=True) if len(ids) > 1 else ids
    return [
        _checked(client.post(f"/attribute/{cid}", params={"project": project}, json=body))
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
