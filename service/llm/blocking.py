"""The chat client for synchronous code (the closed-loop benchmark's memory system): the same
:class:`~service.llm.client.ChatClient` run on an event loop of its own, with the retry policy
a script wants (a transient failure or a timeout is asked again, a few times in all)."""

from __future__ import annotations

import asyncio
from types import TracebackType

from openai.types.chat import ChatCompletionMessageParam

from service.llm.client import Backoff, CallFailed, ChatClient, Completion

RETRIED = frozenset({"transient", "timeout"})


class BlockingChat:
    """Chat completions on one endpoint and model, for callers without an event loop; a
    transient failure or a timeout is asked again until ``attempts`` were made. Close it (or
    use it as a context manager): it owns its loop and connections."""

    def __init__(
        self,
        *,
        base_url: str,
        api_key: str,
        model: str,
        timeout_s: float = 600.0,
        attempts: int = 3,
        temperature: float | None = 0.0,
    ) -> None:
        self.model = model
        self.attempts = attempts
        self._runner = asyncio.Runner()
        self._chat = ChatClient(
            base_url=base_url,
            api_key=api_key,
            model=model,
            timeout_s=timeout_s,
            temperature=temperature,
        )

    def complete(
        self, messages: list[ChatCompletionMessageParam], *, max_tokens: int
    ) -> Completion:
        """One answer of at most ``max_tokens``; the last :class:`CallFailed` (or
        ``EndpointRefused``) when none came."""
        return self._runner.run(self._complete(messages, max_tokens))

    async def _complete(
        self, messages: list[ChatCompletionMessageParam], max_tokens: int
    ) -> Completion:
        backoff = Backoff()
        for attempt in range(1, self.attempts + 1):
            try:
                return await self._chat.complete(messages, max_tokens=max_tokens)
            except CallFailed as e:
                if e.reason not in RETRIED or attempt == self.attempts:
                    raise
                await backoff.wait(e)
        raise AssertionError("unreachable: the last attempt returns or raises")

    def close(self) -> None:
        self._runner.run(self._chat.aclose())
        self._runner.close()

    def __enter__(self) -> BlockingChat:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()
