"""Ids with a slash in them, in URL paths.

Ids are free text (OTLP cases are ``otel:<trace>:<span>/case``), so a client percent-encodes
them into one path segment: ``/cases/a%2Fb/subgraph``. The server decodes the path before
routing, after which ``a%2Fb`` and ``a/b`` look alike and no route matches. So:

- ``EncodedSlashMiddleware`` re-decodes the raw path segment by segment when it holds ``%2F``,
  writing a slash that was inside a segment as NUL (which no id may contain);
- routes name such parameters ``{case_id:id}``: one segment, its NULs turned back into slashes.

Ids without ``%2F`` take the ordinary path untouched.
"""

from __future__ import annotations

from urllib.parse import quote, unquote_to_bytes

from starlette.convertors import Convertor, register_url_convertor
from starlette.types import ASGIApp, Receive, Scope, Send

SLASH_IN_SEGMENT = "\x00"


class IdConvertor(Convertor[str]):
    regex = "[^/]+"

    def convert(self, value: str) -> str:
        return value.replace(SLASH_IN_SEGMENT, "/")

    def to_string(self, value: str) -> str:
        return quote(value, safe="")


register_url_convertor("id", IdConvertor())


def _route_path(raw_path: bytes) -> str:
    segments = raw_path.split(b"/")
    return "/".join(
        unquote_to_bytes(segment).decode("utf-8", "replace").replace("/", SLASH_IN_SEGMENT)
        for segment in segments
    )


class EncodedSlashMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        raw = scope.get("raw_path") if scope["type"] == "http" else None
        if raw and b"%2f" in raw.lower() and b"%00" not in raw:
            scope = {**scope, "path": _route_path(raw)}
        await self.app(scope, receive, send)
