"""A recording proxy in front of a real OpenAI-compatible server (the llama.cpp one in tests).

The service under test talks to the proxy over real HTTP; the proxy forwards each chat request
unchanged to the real server and keeps the request and the answer, so a test can check what the
service sent (``max_tokens`` on every request) and what came back (a runaway stopped at the cap)
without replacing the model.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import httpx
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route


@dataclass
class Exchange:
    request: dict[str, Any]
    status: int
    response: dict[str, Any] | None  # the JSON body of a 200, else None


@dataclass
class RecordingProxy:
    upstream: str  # ends in /v1
    base_url: str = ""
    exchanges: list[Exchange] = field(default_factory=list)

    async def chat(self, request: Request) -> Response:
        body: dict[str, Any] = await request.json()
        async with httpx.AsyncClient(timeout=600) as client:
            answer = await client.post(f"{self.upstream}/chat/completions", json=body)
        data = answer.json() if answer.status_code == 200 else None
        self.exchanges.append(Exchange(body, answer.status_code, data))
        return JSONResponse(answer.json(), status_code=answer.status_code)


@contextmanager
def recording_proxy(upstream: str) -> Iterator[RecordingProxy]:
    """The proxy on a free loopback port for the ``with`` block."""
    proxy = RecordingProxy(upstream)
    routes = [
        Route(path, proxy.chat, methods=["POST"])
        for path in ("/v1/chat/completions", "/chat/completions")
    ]
    config = uvicorn.Config(
        Starlette(routes=routes), log_level="warning", lifespan="off", timeout_graceful_shutdown=1
    )
    server = uvicorn.Server(config)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("recording proxy did not start")
        time.sleep(0.01)
    proxy.base_url = f"http://127.0.0.1:{port}/v1"
    try:
        yield proxy
    finally:
        server.should_exit = True
        thread.join(timeout=5)
        sock.close()
