"""ASGI middleware that refuses request bodies over a byte limit with 413, before parsing.

It checks ``Content-Length`` when sent and counts streamed bytes otherwise, so a chunked upload
cannot slip past the limit either.
"""

from __future__ import annotations

import json

from starlette.types import ASGIApp, Message, Receive, Scope, Send


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
            await self._refuse(send)
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
                    await self._refuse(send)
                return
            await send(message)

        try:
            await self.app(scope, counting_receive, guarded_send)
        except _TooLarge:
            if not refused:
                await self._refuse(send)

    async def _refuse(self, send: Send) -> None:
        body = json.dumps(
            {
                "error": "payload_too_large",
                "message": f"request body is over the limit of {self.max_bytes} bytes; "
                "split the batch into smaller ones",
                "details": {"max_bytes": self.max_bytes},
            }
        ).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 413,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})
