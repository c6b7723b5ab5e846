"""The one place a MemTrace error becomes an HTTP response.

Used by the app's exception handlers and by the ASGI middlewares that answer before a route runs
(authentication, body size), so every error body is ``{"error", "message", "details"}``.
"""

from __future__ import annotations

from typing import Any

from fastapi.encoders import jsonable_encoder
from fastapi.responses import JSONResponse, Response
from starlette.requests import Request

from service.errors import MemTraceError, RetryableError, Unauthorized
from service.ui.login import is_page_request, login_redirect


def error_json(
    status: int, code: str, message: str, details: Any = None, headers: dict[str, str] | None = None
) -> JSONResponse:
    body = {"error": code, "message": message, "details": jsonable_encoder(details)}
    return JSONResponse(body, status_code=status, headers=headers)


def error_response(exc: MemTraceError, request: Request, retry_after_s: int) -> Response:
    """The answer to ``exc``: JSON with its status, ``Retry-After`` on a retryable error, a
    bearer challenge on a 401, and for a person opening a UI page without a key, the key form."""
    if isinstance(exc, Unauthorized) and is_page_request(request):
        return login_redirect(request)
    headers = None
    if isinstance(exc, RetryableError):
        headers = {"Retry-After": str(retry_after_s)}
    elif isinstance(exc, Unauthorized):
        headers = {"WWW-Authenticate": 'Bearer realm="memtrace"'}
    return error_json(exc.status_code, exc.code, exc.message, exc.details, headers)
