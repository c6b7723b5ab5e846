"""Ids with a slash in them, in URL paths.

Ids are free text (OTLP cases are ``otel:<trace>:<span>/case``), so a client percent-encodes
them into one path segment: ``/cases/a%2Fb/subgraph``. The server decodes the path before
routing, after which ``a%2Fb`` and ``a/b`` look alike and no route matches. So:

- ``EncodedSlashMiddleware`` re-decodes the raw path segment by segment when it holds ``%2F``
  or ``%00``, escaping what a segment holds with NUL as the escape character: a slash becomes
  NUL + ``s``, a NUL the client sent becomes NUL + ``0``;
- routes name such parameters ``{case_id:id}``: one segment, its escapes read back.

An id may hold a NUL (ingest stores it like any other character), so the escape keeps the
client's NUL a NUL: ``/cases/n%00x`` names the case ``n\\x00x``, never ``n/x``. Every NUL in a
routed path is the middleware's (a raw path cannot carry one unencoded), so a path without
``%2F`` or ``%00`` takes the ordinary path untouched.
"""

from __future__ import annotations

import re
from urllib.parse import quote, unquote_to_bytes

from starlette.convertors import Convertor, register_url_convertor
from starlette.types import ASGIApp, Receive, Scope, Send

ESCAPE = "\x00"
_ESCAPED = {"s": "/", "0": ESCAPE}
_ESCAPE_SEQUENCE = re.compile(ESCAPE + "([s0])")


def _escape(segment: str) -> str:
    return segment.replace(ESCAPE, ESCAPE + "0").replace("/", ESCAPE + "s")


def _unescape(segment: str) -> str:
    return _ESCAPE_SEQUENCE.sub(lambda m: _ESCAPED[m.group(1)], segment)


class IdConvertor(Convertor[str]):
    regex = "[^/]+"

    def convert(self, value: str) -> str:
        return _unescape(value)

    def to_string(self, value: str) -> str:
        return quote(value, safe="")


register_url_convertor("id", IdConvertor())


def _route_path(raw_path: bytes) -> str:
    return "/".join(
        _escape(unquote_to_bytes(segment).decode("utf-8", "replace"))
        for segment in raw_path.split(b"/")
    )


class EncodedSlashMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        raw = scope.get("raw_path") if scope["type"] == "http" else None
        if raw and (b"%2f" in raw.lower() or b"%00" in raw):
            scope = {**scope, "path": _route_path(raw)}
        await self.app(scope, receive, send)
