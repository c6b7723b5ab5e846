"""One chat completion against an OpenAI-compatible endpoint, for every caller in MemTrace.

- Structured output: a caller that wants JSON passes the ``json_schema`` response format it
  wants; when the server refuses that (400 naming the response format or schema), the client
  falls back to ``json_object``, then to plain text (callers parse tolerantly). What a server
  took is remembered per endpoint and model for the process, so the negotiation costs a call
  once, not per request.
- Every request carries its output cap. Servers that refuse ``max_tokens`` by that name
  (OpenAI's reasoning models) are sent ``max_completion_tokens`` instead, also remembered.
- Every HTTP attempt passes the caller's ``admit`` first (a budget counts it there, or refuses
  it); the SDK's own retries are off, since they would be attempts nobody counts or bounds.
- Concurrency: at most ``concurrency`` requests to one endpoint at once, across every event loop
  of the process (the request loop and the job threads). A one-slot llama.cpp server queues a
  second request and the client's timeout would count that wait; our own queue is outside the
  timeout, which then measures only the server's work.
- Errors are sorted for the caller's policy: :class:`EndpointRefused` (401/403/404: settings are
  wrong, every later call would fail alike; ``/readyz`` reports it, :func:`refusal`),
  :class:`CallFailed` with a reason (``timeout``, ``transient`` for 429/5xx/connection,
  ``rejected`` for another 4xx or an answer that is not a chat completion). :class:`Backoff` is
  the wait between transient failures every policy uses.

Prompts hold user memory: nothing here logs them.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, Literal

import openai
from openai import AsyncOpenAI
from openai.types import CompletionUsage
from openai.types.chat import ChatCompletionMessageParam

from service.errors import LLMEndpointRefused

logger = logging.getLogger(__name__)

OutputMode = Literal["json_schema", "json_object", "text"]
OUTPUT_MODES: tuple[OutputMode, ...] = ("json_schema", "json_object", "text")

REFUSED_STATUS = {401, 403, 404}
"""Wrong key, model or URL."""

SLOT_POLL_S = 0.01
BACKOFF_FIRST_S = 0.2
BACKOFF_MAX_S = 5.0
RETRY_AFTER_MAX_S = 5.0
"""A server's small Retry-After is honoured; a large one is the caller's budget's business."""


class EndpointRefused(LLMEndpointRefused):
    """The endpoint answered ``status`` (401, 403 or 404): its URL, key or model is wrong."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


class CallFailed(Exception):
    """One call gave nothing; ``reason`` is ``timeout``, ``transient`` or ``rejected``.
    ``status`` is the HTTP status the endpoint answered, when it answered one."""

    def __init__(self, reason: str, retry_after_s: float = 0.0, status: int | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retry_after_s = retry_after_s
        self.status = status


@dataclass(frozen=True)
class Completion:
    """An answer's text, why it ended (``"length"`` when the output cap cut it, ``"stop"`` when
    the model finished, None when not reported) and the usage the endpoint reported."""

    content: str
    finish_reason: str | None
    usage: CompletionUsage | None


class Backoff:
    """The wait before asking again after a transient failure: doubling from
    :data:`BACKOFF_FIRST_S` to :data:`BACKOFF_MAX_S`, never shorter than the server's
    Retry-After."""

    def __init__(self) -> None:
        self._delay = BACKOFF_FIRST_S

    async def wait(self, failure: CallFailed) -> None:
        await asyncio.sleep(max(self._delay, failure.retry_after_s))
        self._delay = min(self._delay * 2, BACKOFF_MAX_S)


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


def connections(base_url: str, api_key: str, timeout_s: float) -> AsyncOpenAI:
    """A pool of HTTP connections to one endpoint that several clients share (``connections=``
    of :class:`ChatClient`); its maker closes it (``await pool.close()``)."""
    return AsyncOpenAI(base_url=base_url, api_key=api_key, timeout=timeout_s, max_retries=0)


def _names_response_format(error: openai.BadRequestError) -> bool:
    text = str(error).lower()
    return any(w in text for w in ("response_format", "json_schema", "schema", "grammar"))


def _names_max_tokens(error: openai.BadRequestError) -> bool:
    text = str(error).lower()
    return "max_tokens" in text and "max_completion_tokens" in text


def _retry_after(error: Exception) -> float:
    response = getattr(error, "response", None)
    value = response.headers.get("retry-after") if response is not None else None
    try:
        return min(float(value), RETRY_AFTER_MAX_S) if value else 0.0
    except ValueError:
        return 0.0


def _admit_all() -> None:
    return None


class ChatClient:
    """Chat completions on one endpoint and model. ``connections`` (from :func:`connections`)
    lets callers share one pool across clients; it is then used with ``max_retries=0`` and
    ``timeout_s`` too, and not closed by :meth:`aclose`."""

    def __init__(
        self,
        *,
        base_url: str,
        api_key: str,
        model: str,
        timeout_s: float,
        concurrency: int = 1,
        temperature: float | None = 0.0,
        connections: AsyncOpenAI | None = None,
    ) -> None:
        self.base_url = base_url
        self.model = model
        self.temperature = temperature
        self._key = (base_url, model)
        self.call_seconds: list[float] = []
        """Every HTTP attempt's seconds, from sending to the answer or error (the wait for a
        slot is not in it): what ``memtrace judge check`` reports as latency."""
        self._slots = _slots_for(base_url, max(1, concurrency))
        self._owns_client = connections is None
        self._client = (
            AsyncOpenAI(base_url=base_url, api_key=api_key, timeout=timeout_s, max_retries=0)
            if connections is None
            else connections.with_options(max_retries=0, timeout=timeout_s)
        )

    async def aclose(self) -> None:
        if self._owns_client:
            await self._client.close()

    @property
    def mode(self) -> OutputMode:
        """The structured output this endpoint and model take (what a schema is sent as)."""
        return OUTPUT_MODES[_modes.get(self._key, 0)]

    async def complete(
        self,
        messages: list[ChatCompletionMessageParam],
        *,
        max_tokens: int,
        schema: dict[str, Any] | None = None,
        admit: Callable[[], None] = _admit_all,
    ) -> Completion:
        """One answer of at most ``max_tokens``; ``schema`` (a ``json_schema`` response format)
        asks for structured output, None for plain text. ``admit()`` runs before every HTTP
        attempt and may raise to stop it (a refused response format or token parameter costs
        one more attempt, once per endpoint and process)."""
        while True:
            admit()
            try:
                async with self._slots.hold():
                    sent = time.perf_counter()
                    try:
                        response = await self._client.chat.completions.create(
                            model=self.model,
                            messages=messages,
                            **self._options(max_tokens, schema),
                        )
                    finally:
                        self.call_seconds.append(time.perf_counter() - sent)
            except openai.BadRequestError as e:
                if _names_max_tokens(e) and self._token_param() == "max_tokens":
                    _token_param[self._key] = "max_completion_tokens"
                    continue
                if schema is not None and _names_response_format(e) and self._downgrade():
                    continue
                logger.warning("LLM endpoint answered 400, not retried")
                raise CallFailed("rejected", status=e.status_code) from e
            except openai.APITimeoutError as e:
                raise CallFailed("timeout") from e
            except openai.APIConnectionError as e:
                raise CallFailed("transient", _retry_after(e)) from e
            except (openai.RateLimitError, openai.InternalServerError) as e:
                raise CallFailed("transient", _retry_after(e), e.status_code) from e
            except openai.APIStatusError as e:
                if e.status_code in REFUSED_STATUS:
                    raise self._refused(e.status_code) from e
                raise CallFailed("rejected", status=e.status_code) from e
            except openai.APIError as e:  # e.g. a body that is not a chat completion
                raise CallFailed("rejected") from e
            _refusals.pop(self._key, None)
            choice = response.choices[0] if response.choices else None
            return Completion(
                content=(choice.message.content or "") if choice else "",
                finish_reason=choice.finish_reason if choice else None,
                usage=response.usage,
            )

    async def probe(self) -> str | None:
        """Ask for one token, as the service starts: the refusal message when the endpoint
        refuses (401/403/404), else None (an endpoint that is down now may be up by the first
        attribution: only a refusal is a settings error)."""
        messages: list[ChatCompletionMessageParam] = [{"role": "user", "content": "Say OK."}]
        try:
            await self._client.chat.completions.create(
                model=self.model, messages=messages, max_tokens=1
            )
        except openai.APIStatusError as e:
            if e.status_code in REFUSED_STATUS:
                return str(self._refused(e.status_code))
        except openai.APIError:
            pass
        else:
            _refusals.pop(self._key, None)
        return None

    def _refused(self, status: int) -> EndpointRefused:
        message = endpoint_failure_message(self.base_url, self.model, status)
        _refusals[self._key] = message
        return EndpointRefused(message, status)

    def _token_param(self) -> str:
        return _token_param.get(self._key, "max_tokens")

    def _options(self, max_tokens: int, schema: dict[str, Any] | None) -> dict[str, Any]:
        options: dict[str, Any] = {self._token_param(): max_tokens}
        if self.temperature is not None:
            options["temperature"] = self.temperature
        mode = self.mode
        if schema is not None and mode == "json_schema":
            options["response_format"] = schema
        elif schema is not None and mode == "json_object":
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
            "LLM endpoint %s refused response_format %s; using %s from now on",
            self.base_url,
            OUTPUT_MODES[current],
            OUTPUT_MODES[current + 1],
        )
        return True
