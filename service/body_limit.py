"""ASGI middleware that refuses request bodies over a byte limit with 413, before parsing.

It checks ``Content-Length`` when sent and counts streamed bytes otherwise, so a chunked upload
cannot slip past the limit either.
"""

from __future__ import annotations

from starlette.requests import HTTPConnection
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from service.errors import PayloadTooLarge
from service.http_errors import error_response


class _TooLarge(Exception):
    pass


class BodyLimitMiddleware:
    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            await self._refuse(scope, receive, send)
            return

        seen = 0
        exceeded = False
        refused = False

        async def counting_receive() -> Message:
            nonlocal seen, exceeded
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    exceeded = True
                    raise _TooLarge
            return message

        async def guarded_send(message: Message) -> None:
            # FastAPI turns an exception raised while reading the body into its own 400; once
            # the limit was crossed, whatever the app answers is replaced by our 413.
            nonlocal refused
            if exceeded:
                if not refused:
                    refused = True
                    await self._refuse(scope, receive, send)
                return
            await send(message)

        try:
            await self.app(scope, counting_receive, guarded_send)
        except _TooLarge:
            if not refused:
                await self._refuse(scope, receive, send)

    async def _refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        refusal = PayloadTooLarge(
            f"request body is over the limit of {self.max_bytes} bytes; "
            "split the batch into smaller ones",
            details=[
                {
                    "loc": ["body"],
                    "msg": f"over the limit of {self.max_bytes} bytes",
                    "max_bytes": self.max_bytes,
                }
            ],
        )
        await error_response(refusal, HTTPConnection(scope), 0)(scope, receive, send)
