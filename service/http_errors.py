"""The one place an error becomes an HTTP response: the HTTP error contract.

Every error body is ``{"error", "message", "details"}`` (``service.errors`` documents the shape of
``details``): the app's exception handlers (``MemTraceError``, request validation, 404/405 from
routing, anything unexpected) and the ASGI middlewares that answer before a route runs
(authentication, body size) all build it here. A person's browser opening a UI page gets the same
error as an HTML page instead, or the key form when it has no key: how is the UI's business, so
it hands this module a :class:`PageErrors` (``app.state.page_errors``, set by ``service.app``)
and this module, at the bottom of the server, imports nothing of the UI.
"""

from __future__ import annotations

import logging
from typing import Protocol

from fastapi import FastAPI
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.requests import HTTPConnection, Request

from service.errors import Details, InvalidInput, MemTraceError, RetryableError, Unauthorized

log = logging.getLogger(__name__)

_HTTP_CODES = {404: "not_found", 405: "method_not_allowed"}


class PageErrors(Protocol):
    """How a person's browser opening a page is answered instead of with JSON."""

    def is_page_request(self, request: Request) -> bool:
        """Whether ``request`` is a browser opening a page (not a script reading data)."""
        ...

    def error_page(self, status: int, code: str, message: str) -> Response:
        """The error as a page."""
        ...

    def login_redirect(self, request: Request) -> Response:
        """Where a page request without a key goes (the key form, then back)."""
        ...


def _page_request(connection: HTTPConnection) -> tuple[PageErrors, Request] | None:
    """The app's :class:`PageErrors` and the request, when this is a page request."""
    if connection.scope["type"] != "http":
        return None
    app = connection.scope.get("app")
    page_errors: PageErrors | None = getattr(getattr(app, "state", None), "page_errors", None)
    if page_errors is None:
        return None
    request = Request(connection.scope)
    return (page_errors, request) if page_errors.is_page_request(request) else None


def error_body(code: str, message: str, details: Details | None) -> dict[str, object]:
    """The error contract's body, also for an error sent inside a stream (an NDJSON line of
    ``POST /prompts/{name}/optimize?stream=true`` after its 200 has gone out)."""
    return {"error": code, "message": message, "details": jsonable_encoder(details)}


def openai_error(exc: MemTraceError) -> JSONResponse:
    """An error as OpenAI's API words it, ``{"error": {"message", "type", "param", "code"}}``,
    for the OpenAI-compatible embedding server (``service.embeddings.server``): an ``openai``
    client puts that message in the exception it raises, where the contract's body would leave
    it out. ``param``: the first body field ``details`` names."""
    where = [d["loc"][1] for d in exc.details or () if len(d.get("loc", ())) > 1]
    body = {
        "message": exc.message,
        "type": "invalid_request_error" if exc.status_code < 500 else "server_error",
        "param": str(where[0]) if where else None,
        "code": exc.code,
    }
    return JSONResponse({"error": body}, status_code=exc.status_code)


def _body(status: int, code: str, message: str, details: Details | None) -> JSONResponse:
    return JSONResponse(error_body(code, message, details), status_code=status)


def _answer(
    connection: HTTPConnection,
    status: int,
    code: str,
    message: str,
    details: Details | None = None,
    headers: dict[str, str] | None = None,
) -> Response:
    """JSON, or for a browser opening a UI page, the same error as a page."""
    page = _page_request(connection)
    if page is not None:
        response = page[0].error_page(status, code, message)
    else:
        response = _body(status, code, message, details)
    response.headers.update(headers or {})
    return response


def error_response(exc: MemTraceError, connection: HTTPConnection, retry_after_s: int) -> Response:
    """The answer to ``exc``: its status, ``Retry-After`` on a retryable error, a bearer
    challenge on a 401, and for a person opening a UI page without a key, the key form."""
    if isinstance(exc, Unauthorized) and (page := _page_request(connection)) is not None:
        return page[0].login_redirect(page[1])
    headers = None
    if isinstance(exc, RetryableError):
        headers = {"Retry-After": str(retry_after_s)}
    elif isinstance(exc, Unauthorized):
        headers = {"WWW-Authenticate": 'Bearer realm="memtrace"'}
    return _answer(connection, exc.status_code, exc.code, exc.message, exc.details, headers)


def _validation_details(exc: RequestValidationError) -> Details:
    # Echoing "input" back would copy memory content into error bodies and logs: leave it out.
    return [
        {"loc": list(err.get("loc", ())), "msg": err.get("msg", ""), "type": err.get("type", "")}
        for err in exc.errors()
    ]


def install_error_handlers(app: FastAPI, retry_after_s: int) -> None:
    """Map every error to the contract's body; nothing leaks a stack trace."""

    @app.exception_handler(MemTraceError)
    async def on_memtrace_error(request: Request, exc: MemTraceError) -> Response:
        return error_response(exc, request, retry_after_s)

    @app.exception_handler(StarletteHTTPException)
    async def on_http_error(request: Request, exc: StarletteHTTPException) -> Response:
        # Unknown routes and wrong methods: the same body as every other error.
        code = _HTTP_CODES.get(exc.status_code, "http_error")
        headers = dict(exc.headers) if exc.headers else None
        return _answer(request, exc.status_code, code, str(exc.detail), None, headers)

    @app.exception_handler(RequestValidationError)
    async def on_validation_error(request: Request, exc: RequestValidationError) -> Response:
        details = _validation_details(exc)
        invalid = InvalidInput(f"{len(details)} invalid item(s); see details", details=details)
        return error_response(invalid, request, retry_after_s)

    @app.exception_handler(Exception)
    async def on_unexpected(request: Request, exc: Exception) -> Response:
        log.error("unexpected %s while serving a request", type(exc).__name__, exc_info=exc)
        return _answer(
            request, 500, "internal_error", "unexpected server error; see the service log"
        )


__all__ = ["error_response", "install_error_handlers", "openai_error"]
