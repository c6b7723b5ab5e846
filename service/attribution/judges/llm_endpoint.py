"""One chat completion against an OpenAI-compatible endpoint, as the LLM judge needs it.

- Structured output: ask for the verdicts with ``response_format`` ``json_schema`` (strict);
  when the server refuses that (400 naming the response format or schema), fall back to
  ``json_object``, then to plain text (the parser is tolerant). What a server took is remembered
  per endpoint and model for the process, so the negotiation costs a call once, not per case.
- Every request carries ``max_tokens``. Servers that refuse the parameter by that name (OpenAI's
  reasoning models) are sent ``max_completion_tokens`` instead, also remembered.
- Concurrency: at most ``concurrency`` requests to one endpoint at once, across every event loop
  of the process (the request loop and the job threads). A one-slot llama.cpp server queues a
  second request and the client's timeout would count that wait; our own queue is outside the
  timeout, which then measures only the server's work.
- Errors are sorted for the judge: :class:`EndpointRefused` (401/403/404: settings are wrong,
  every later call would fail alike), :class:`CallFailed` with a reason (``timeout``,
  ``transient`` for 429/5xx/connection, ``rejected`` for another 4xx).

Prompts hold user memory: nothing here logs them.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, Literal

import openai
from openai import AsyncOpenAI
from openai.types import CompletionUsage
from openai.types.chat import ChatCompletionMessageParam

from service.attribution.judges.llm_prompt import answer_schema
from service.errors import LLMEndpointRefused

logger = logging.getLogger(__name__)

OutputMode = Literal["json_schema", "json_object", "text"]
OUTPUT_MODES: tuple[OutputMode, ...] = ("json_schema", "json_object", "text")

REFUSED_STATUS = {401, 403, 404}
"""Wrong key, model or URL."""

TRANSIENT = (openai.APIConnectionError, openai.RateLimitError, openai.InternalServerError)
"""Worth another attempt (rate limits, 5xx, a dropped connection; a timeout is not one)."""

SLOT_POLL_S = 0.01


EndpointRefused = LLMEndpointRefused


class CallFailed(Exception):
    """One call gave nothing; ``reason`` is ``timeout``, ``transient`` or ``rejected``."""

    def __init__(self, reason: str, retry_after_s: float = 0.0) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retry_after_s = retry_after_s


@dataclass(frozen=True)
class Completion:
    content: str
    finish_reason: str | None
    usage: CompletionUsage | None


class _Slots:
    """A counting limit shared by every event loop of the process (an ``asyncio.Semaphore``
    belongs to one loop). Waiting polls without blocking the loop."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._free = threading.BoundedSemaphore(size)

    @asynccontextmanager
    async def hold(self) -> AsyncIterator[None]:
        while not self._free.acquire(blocking=False):
            await asyncio.sleep(SLOT_POLL_S)
        try:
            yield
        finally:
            self._free.release()


_lock = threading.Lock()
_slots: dict[str, _Slots] = {}
_modes: dict[tuple[str, str], int] = {}
_token_param: dict[tuple[str, str], str] = {}
_refusals: dict[tuple[str, str], str] = {}
"""(base URL, model) -> what the endpoint said when it last refused us; cleared by an answer."""


def refusal(base_url: str, model: str) -> str | None:
    """Why the endpoint refused the last request of this process, if its last answer was a
    refusal (what ``/readyz`` reports)."""
    return _refusals.get((base_url, model))


def _slots_for(base_url: str, size: int) -> _Slots:
    with _lock:
        slots = _slots.get(base_url)
        if slots is None or slots.size != size:
            slots = _slots[base_url] = _Slots(size)
        return slots


def endpoint_failure_message(base_url: str, model: str, status: int) -> str:
    what = {401: "refused the key", 403: "refused the key", 404: "does not know the model or path"}
    return (
        f"the LLM endpoint {base_url} {what.get(status, 'refused')} (HTTP {status}) for model "
        f"{model!r}: check MEMTRACE_LLM_BASE_URL (it ends in /v1 for most servers), "
        "MEMTRACE_LLM_MODEL and MEMTRACE_LLM_API_KEY"
    )


def _names_response_format(error: openai.BadRequestError) -> bool:
    text = str(error).lower()
    return any(w in text for w in ("response_format", "json_schema", "schema", "grammar"))


def _names_max_tokens(error: openai.BadRequestError) -> bool:
    text = str(error).lower()
    return "max_tokens" in text and "max_completion_tokens" in text


class LLMEndpoint:
    """Chat completions for the judge on one endpoint and model."""

    def __init__(
        self,
        *,
        base_url: str,
        api_key: str,
        model: str,
        timeout_s: float,
        concurrency: int = 1,
        temperature: float | None = 0.0,
        client: AsyncOpenAI | None = None,
    ) -> None:
        self.base_url = base_url
        self.model = model
        self.temperature = temperature
        self._key = (base_url, model)
        self.call_seconds: list[float] = []
        """Every HTTP attempt's seconds, from sending to the answer or error (the wait for a
        slot is not in it): what ``memtrace judge check`` reports as latency."""
        self._slots = _slots_for(base_url, max(1, concurrency))
        self._owns_client = client is None
        # max_retries=0: the SDK's own retries would be attempts we neither count nor bound.
        self._client = (
            AsyncOpenAI(base_url=base_url, api_key=api_key, timeout=timeout_s, max_retries=0)
            if client is None
            else client.with_options(max_retries=0, timeout=timeout_s)
        )

    async def aclose(self) -> None:
        if self._owns_client:
            await self._client.close()

    @property
    def mode(self) -> OutputMode:
        return OUTPUT_MODES[_modes.get(self._key, 0)]

    async def complete(
        self,
        messages: list[ChatCompletionMessageParam],
        unit_ids: list[str],
        max_tokens: int,
        on_call: Any,
    ) -> Completion:
        """One answer about ``unit_ids``; ``on_call()`` runs before every HTTP attempt (a
        refused response format costs one more attempt, once per endpoint and process)."""
        while True:
            on_call()
            try:
                async with self._slots.hold():
                    sent = time.perf_counter()
                    try:
                        response = await self._client.chat.completions.create(
                            model=self.model,
                            messages=messages,
                            **self._options(unit_ids, max_tokens),
                        )
                    finally:
                        self.call_seconds.append(time.perf_counter() - sent)
            except openai.BadRequestError as e:
                if _names_max_tokens(e) and self._token_param() == "max_tokens":
                    _token_param[self._key] = "max_completion_tokens"
                    continue
                if _names_response_format(e) and self._downgrade():
                    continue
                logger.warning("LLM judge: endpoint answered 400, not retried")
                raise CallFailed("rejected") from e
            except openai.APITimeoutError as e:
                raise CallFailed("timeout") from e
            except (
                openai.APIConnectionError,
                openai.RateLimitError,
                openai.InternalServerError,
            ) as e:
                raise CallFailed("transient", _retry_after(e)) from e
            except openai.APIStatusError as e:
                if e.status_code in REFUSED_STATUS:
                    message = endpoint_failure_message(self.base_url, self.model, e.status_code)
                    _refusals[self._key] = message
                    raise EndpointRefused(message) from e
                raise CallFailed("rejected") from e
            except openai.APIError as e:  # e.g. a body that is not a chat completion
                raise CallFailed("rejected") from e
            _refusals.pop(self._key, None)
            choice = response.choices[0] if response.choices else None
            return Completion(
                content=(choice.message.content or "") if choice else "",
                finish_reason=choice.finish_reason if choice else None,
                usage=response.usage,
            )

    def _token_param(self) -> str:
        return _token_param.get(self._key, "max_tokens")

    def _options(self, unit_ids: list[str], max_tokens: int) -> dict[str, Any]:
        options: dict[str, Any] = {self._token_param(): max_tokens}
        if self.temperature is not None:
            options["temperature"] = self.temperature
        mode = self.mode
        if mode == "json_schema":
            options["response_format"] = answer_schema(unit_ids)
        elif mode == "json_object":
            options["response_format"] = {"type": "json_object"}
        return options

    def _downgrade(self) -> bool:
        """Fall back to the next output mode; False when plain text was refused too."""
        with _lock:
            current = _modes.get(self._key, 0)
            if current + 1 >= len(OUTPUT_MODES):
                return False
            _modes[self._key] = current + 1
        logger.warning(
            "LLM judge: %s refused response_format %s; using %s from now on",
            self.base_url,
            OUTPUT_MODES[current],
            OUTPUT_MODES[current + 1],
        )
        return True


def _retry_after(error: Exception) -> float:
    """A server's small Retry-After (seconds) is honoured; a large one is the budget's business."""
    response = getattr(error, "response", None)
    value = response.headers.get("retry-after") if response is not None else None
    try:
        return min(float(value), 5.0) if value else 0.0
    except ValueError:
        return 0.0


async def probe(base_url: str, api_key: str, model: str, timeout_s: float) -> str | None:
    """Ask the endpoint for one token, as the service starts: the refusal message when it
    refuses (401/403/404), else None (an endpoint that is down now may be up by the first
    attribution: only a refusal is a settings error)."""
    endpoint = LLMEndpoint(base_url=base_url, api_key=api_key, model=model, timeout_s=timeout_s)
    messages: list[ChatCompletionMessageParam] = [{"role": "user", "content": "Say OK."}]
    try:
        await endpoint._client.chat.completions.create(model=model, messages=messages, max_tokens=1)
    except openai.APIStatusError as e:
        if e.status_code in REFUSED_STATUS:
            message = endpoint_failure_message(base_url, model, e.status_code)
            _refusals[(base_url, model)] = message
            return message
    except openai.APIError:
        pass
    else:
        _refusals.pop((base_url, model), None)
    finally:
        await endpoint.aclose()
    return None
