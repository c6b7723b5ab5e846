"""What the client raises. Everything derives from ``MemTraceClientError``."""

from __future__ import annotations

from typing import Any


class MemTraceClientError(Exception):
    """Root of the client's errors."""


class RejectedRequest(MemTraceClientError):
    """The service refused a request for what it says (a 4xx other than 429): sending it again
    cannot succeed. ``status`` is the HTTP status and ``body`` the service's JSON error
    (``error``, ``message``, ``details`` with the location of each problem)."""

    def __init__(self, status: int, body: Any) -> None:
        message = body.get("message") if isinstance(body, dict) else None
        super().__init__(f"HTTP {status}: {message or 'rejected'}")
        self.status = status
        self.body = body


class RejectedBatch(RejectedRequest):
    """The service refused a batch for what it contains (a 4xx other than 429)."""


class ServiceUnavailable(MemTraceClientError):
    """The service did not accept the batch through every retry (down, overloaded, 5xx)."""


class RequestFailed(MemTraceClientError):
    """The service answered a read (``MemTraceClient.prompt``) with an error: ``status`` and the
    service's JSON error in ``body``, as for ``RejectedBatch``."""

    def __init__(self, status: int, body: Any) -> None:
        message = body.get("message") if isinstance(body, dict) else None
        super().__init__(f"HTTP {status}: {message or 'failed'}")
        self.status = status
        self.body = body
