"""Authentication at the edge: the caller's key is checked before any request body is read.

FastAPI reads and parses a body before it runs a route's dependencies, so a key checked in a
dependency would let an unauthenticated caller make the service parse 8 MB of JSON, or learn
from a 422 what a body should look like. This middleware answers 401 from the headers alone and
leaves the ``Principal`` in the request's state; which project the caller may act on is decided
later, in one place (``service.auth.acting_project``).

Cross-site writes: a browser sends the UI's cookie with any request to this host, including a
form another page (even one on another local port: ports do not make another site) submits. A
POST authenticated by the cookie must therefore be JSON (``Content-Type: application/json``,
which a page on another origin cannot send without a CORS preflight this service never grants;
other unsafe methods need that preflight anyway), and any request that changes something must,
when the browser says where it comes from (``Origin``), come from this origin.
"""

from __future__ import annotations

import time

from starlette.requests import Request
from starlette.types import ASGIApp, Receive, Scope, Send

from service.auth import (
    SESSION_COOKIE,
    ApiKey,
    Principal,
    bearer_token,
    find_key,
    find_session_key,
    same_origin,
)
from service.errors import Forbidden, MemTraceError, Unauthorized
from service.http_errors import error_response

OPEN_PATHS = frozenset(
    {
        "/healthz",
        "/readyz",
        "/openapi.json",
        "/docs",
        "/docs/oauth2-redirect",
        "/redoc",
        "/ui/login",
        "/",
        "/ui",
        "/ui/static/ui.css",
    }
)
OPEN_PREFIXES = ("/docs/static/",)
"""Reachable without a key: the probes, the API description and its pages' assets, the form
that takes a key and its stylesheet, and the two ways into the console (they only redirect)."""
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


class AuthenticationMiddleware:
    def __init__(self, app: ASGIApp, retry_after_s: int) -> None:
        self.app = app
        self.retry_after_s = retry_after_s

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or _is_open(scope["path"]):
            await self.app(scope, receive, send)
            return
        keys = scope["app"].state.api_keys
        if not keys:
            await self.app(scope, receive, send)
            return
        connection = Request(scope)
        try:
            principal = authenticate(connection, keys)
        except MemTraceError as exc:
            response = error_response(exc, connection, self.retry_after_s)
            await response(scope, receive, send)
            return
        scope.setdefault("state", {})["principal"] = principal  # read by service.auth
        await self.app(scope, receive, send)


def _is_open(path: str) -> bool:
    return path in OPEN_PATHS or path.startswith(OPEN_PREFIXES)


def authenticate(connection: Request, keys: tuple[ApiKey, ...]) -> Principal:
    """The caller's key from ``Authorization: Bearer`` or the UI's session cookie; raises
    ``Unauthorized`` without a known key (or a live session of one) and ``Forbidden`` for a
    cookie-authenticated cross-site write."""
    token = bearer_token(connection.headers)
    if token is not None:
        key = find_key(keys, token)
        if key is None:
            raise Unauthorized("unknown API key")
        return Principal(key)
    session = connection.cookies.get(SESSION_COOKIE)
    if not session:
        raise Unauthorized("an API key is required: send `Authorization: Bearer <key>`")
    key = find_session_key(keys, session, time.time())
    if key is None:
        raise Unauthorized("the browser's session has expired or its key was withdrawn")
    if connection.scope["method"] not in SAFE_METHODS:
        _refuse_cross_site(connection)
    return Principal(key)


def _refuse_cross_site(connection: Request) -> None:
    media_type = connection.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    # Of the unsafe methods only POST can be sent cross-site without a preflight (a form);
    # a PUT or DELETE from another origin needs a CORS grant this service never gives.
    if connection.scope["method"] == "POST" and media_type != "application/json":
        raise Forbidden(
            "a write signed in by the browser cookie must send Content-Type: application/json",
            details=[{"loc": ["header", "content-type"], "msg": "must be application/json"}],
        )
    origin = connection.headers.get("origin")
    if origin is not None and not same_origin(origin, connection):
        raise Forbidden(
            "a write signed in by the browser cookie must come from this service's own pages",
            details=[{"loc": ["header", "origin"], "msg": "not this service's origin"}],
        )
