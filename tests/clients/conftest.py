"""Fixtures the adapters' tests share."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Refuse to resolve any host but this machine (a tiktoken or LangSmith download, a call to
    api.openai.com would need one), with no OpenAI key and no LangSmith tracing in the
    environment; yields the hosts that were asked for."""
    asked: list[str] = []
    resolve = socket.getaddrinfo

    def local_only(host: Any, *args: Any, **kwargs: Any) -> Any:
        name = host.decode() if isinstance(host, bytes) else str(host)
        if name not in ("127.0.0.1", "localhost", "::1"):
            asked.append(name)
            raise OSError(f"no network in this test: {name}")
        return resolve(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", local_only)
    for variable in ("LANGSMITH_TRACING", "LANGCHAIN_TRACING_V2", "OPENAI_API_KEY"):
        monkeypatch.delenv(variable, raising=False)
    yield asked
