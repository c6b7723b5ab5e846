"""Sending batches to a running service, with retries that are safe because ingestion is
idempotent: a batch that landed before a lost response is counted as ``existing`` on re-send."""

from __future__ import annotations

import time
from typing import Any

import httpx

RETRY_STATUSES = {429, 500, 502, 503, 504}


class SendError(RuntimeError):
    """The service refused a batch (4xx) or stayed unavailable through every retry."""

    def __init__(self, message: str, status: int | None = None, body: Any = None) -> None:
        super().__init__(message)
        self.status = status
        self.body = body


def post_batch(
    client: httpx.Client, batch: dict[str, Any], *, attempts: int = 6, backoff_s: float = 0.5
) -> dict[str, Any]:
    """POST one batch to ``/traces``; retries connection errors, 429 and 5xx with backoff."""
    last: str = ""
    for attempt in range(attempts):
        try:
            response = client.post("/traces", json=batch)
        except httpx.TransportError as e:
            last = f"{type(e).__name__}: {e}"
        else:
            if response.status_code == 200:
                result: dict[str, Any] = response.json()
                return result
            if response.status_code not in RETRY_STATUSES:
                body = _body(response)
                message = body.get("message") if isinstance(body, dict) else None
                raise SendError(
                    f"HTTP {response.status_code}: {message or response.text[:500]}",
                    response.status_code,
                    body,
                )
            last = f"HTTP {response.status_code}"
            retry_after = response.headers.get("retry-after", "")
            if retry_after.isdigit():
                time.sleep(min(float(retry_after), 30.0))
                continue
        time.sleep(backoff_s * 2**attempt)
    raise SendError(f"gave up after {attempts} attempts: {last}")


def _body(response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        return None
