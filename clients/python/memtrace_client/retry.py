"""When to retry a request, and how long to wait before the next try.

Ingestion is idempotent (an identical re-send is counted as ``existing``, never duplicated), so
any failure where the request may not have landed is safe to retry: connection errors, timeouts
(``httpx.TransportError``), 429 and every 5xx. Other 4xx mean the batch itself is wrong;
sending it again cannot help.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import httpx


def is_retryable_status(status: int) -> bool:
    """429 (slow down) and every 5xx (the service or its Neo4j is away)."""
    return status == 429 or status >= 500


def retry_after_seconds(response: httpx.Response) -> float | None:
    """The server's ``Retry-After`` in seconds, when it gave one as a number."""
    value = response.headers.get("retry-after", "").strip()
    try:
        seconds = float(value)
    except ValueError:
        return None
    return seconds if seconds >= 0 else None


@dataclass(frozen=True)
class Backoff:
    """Exponential backoff with full jitter: try ``n`` waits a random time up to
    ``min(max_s, base_s * 2**n)``, so many clients recovering together do not stampede. A
    server's ``Retry-After`` is a floor (up to ``max_server_hint_s``)."""

    base_s: float = 0.5
    max_s: float = 30.0
    jitter: bool = True
    max_server_hint_s: float = 120.0

    def delay(self, attempt: int, server_hint: float | None = None) -> float:
        ceiling = min(self.max_s, self.base_s * 2 ** min(attempt, 30))
        wait = random.uniform(0, ceiling) if self.jitter else ceiling
        if server_hint is not None:
            wait = max(wait, min(server_hint, self.max_server_hint_s))
        return wait
