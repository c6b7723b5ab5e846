"""Chat completions for prompt optimisation on a hard budget of calls and tokens.

The endpoint, key, model and timeout are the llm judge's (``MEMTRACE_LLM_*``), and so is the
handling of errors (``service.attribution.judges.llm``): transient ones (connection, timeout,
429, 5xx) are retried with the same backoff and Retry-After rule, every attempt counts as a call,
the SDK's own retries are off. The budget is never exceeded, which the judge does not promise
(it lets an answer run past its allowance):

- a call starts only when ``calls < max_calls`` and its input estimate (characters / 3, on the
  high side of real tokenizers) plus its output cap fits in what is left of ``max_tokens``;
- the output cap is sent as the request's ``max_tokens``, so the answer cannot run past it.
What is left is counted from the ``usage`` the endpoint reports (the estimate when it reports
none).
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass

import openai
from openai import AsyncOpenAI
from openai.types.chat import ChatCompletionMessageParam

from service.attribution.judges.llm import (
    BACKOFF_FIRST_S,
    BACKOFF_MAX_S,
    FATAL_STATUS,
    TRANSIENT,
    _retry_after,
)
from service.errors import InvalidInput, UpstreamFailed
from service.models.prompts import OptimizeCost
from service.settings import Settings

logger = logging.getLogger(__name__)

CHARS_PER_TOKEN = 3


def check_endpoint(settings: Settings) -> str:
    """The configured endpoint; ``InvalidInput`` when there is none."""
    if not settings.llm_base_url:
        raise InvalidInput(
            "prompt optimisation needs an OpenAI-compatible endpoint: set "
            "MEMTRACE_LLM_BASE_URL (and MEMTRACE_LLM_API_KEY, MEMTRACE_LLM_MODEL)",
            details=[{"loc": ["settings", "llm_base_url"], "msg": "no LLM endpoint"}],
        )
    return settings.llm_base_url


@dataclass(frozen=True)
class Reply:
    """An answer's text and why it ended: ``finish_reason`` is ``"length"`` when the output cap
    (``max_tokens``) cut it, ``"stop"`` when the model finished, None when not reported."""

    text: str
    finish_reason: str | None


class BudgetSpent(Exception):
    """No call fits in what is left of the budget."""


def estimate_tokens(messages: list[ChatCompletionMessageParam]) -> int:
    return sum(len(str(m.get("content") or "")) for m in messages) // CHARS_PER_TOKEN + 8


class BudgetedChat:
    """One optimisation's connection to the LLM endpoint and what it has spent."""

    def __init__(self, settings: Settings, max_calls: int, max_tokens: int) -> None:
        check_endpoint(settings)
        self.model = settings.llm_model
        self.max_calls = max_calls
        self.max_tokens = max_tokens
        self.cost = OptimizeCost()
        self._disabled = False
        self._client = AsyncOpenAI(
            base_url=settings.llm_base_url,
            api_key=settings.llm_api_key.get_secret_value(),
            timeout=settings.llm_timeout_s,
            max_retries=0,
        )

    @property
    def tokens_spent(self) -> int:
        return self.cost.input_tokens + self.cost.output_tokens

    def fits(
        self,
        messages: list[ChatCompletionMessageParam],
        output_tokens: int,
        reserve: tuple[int, int] = (0, 0),
    ) -> bool:
        """Whether one more call with this input and output cap stays within the budget and
        still leaves ``reserve`` (calls, tokens) for what must come after it."""
        calls, tokens = reserve
        if self._disabled or self.cost.llm_calls + 1 + calls > self.max_calls:
            return False
        needed = estimate_tokens(messages) + output_tokens + tokens
        return needed <= self.max_tokens - self.tokens_spent

    async def aclose(self) -> None:
        await self._client.close()

    async def complete(
        self,
        messages: list[ChatCompletionMessageParam],
        output_tokens: int,
        reserve: tuple[int, int] = (0, 0),
    ) -> Reply:
        """The answer; ``BudgetSpent`` when no attempt is left (beside ``reserve``, see
        ``fits``), ``UpstreamFailed`` when the endpoint refuses."""
        delay = BACKOFF_FIRST_S
        while self.fits(messages, output_tokens, reserve):
            self.cost.llm_calls += 1
            try:
                response = await self._client.chat.completions.create(
                    model=self.model,
                    messages=messages,
                    max_tokens=output_tokens,
                    temperature=0.0,
                )
            except TRANSIENT as e:
                logger.warning("prompt optimisation: transient %s", type(e).__name__)
                self._spend_estimate(messages, 0)
                await asyncio.sleep(max(delay, _retry_after(e)))
                delay = min(delay * 2, BACKOFF_MAX_S)
                continue
            except openai.APIStatusError as e:
                logger.warning("prompt optimisation: endpoint answered %d", e.status_code)
                if e.status_code in FATAL_STATUS:
                    self._disabled = True
                raise UpstreamFailed(
                    f"the LLM endpoint answered {e.status_code}; nothing stored",
                    details=[{"loc": ["llm"], "msg": f"HTTP {e.status_code}"}],
                ) from e
            except openai.APIError as e:
                raise UpstreamFailed(
                    f"the LLM endpoint's answer is unusable ({type(e).__name__}); nothing stored",
                    details=[{"loc": ["llm"], "msg": type(e).__name__}],
                ) from e
            usage = response.usage
            if usage is None:
                self._spend_estimate(messages, output_tokens)
            else:
                self.cost.input_tokens += usage.prompt_tokens
                self.cost.output_tokens += usage.completion_tokens
            if not response.choices:
                return Reply("", None)
            choice = response.choices[0]
            return Reply(choice.message.content or "", choice.finish_reason)
        raise BudgetSpent(
            f"budget spent: {self.cost.llm_calls} of {self.max_calls} calls, "
            f"{self.tokens_spent} of {self.max_tokens} tokens"
        )

    def _spend_estimate(self, messages: list[ChatCompletionMessageParam], output: int) -> None:
        """Count a call whose usage is unknown at its estimate, so the budget stays honest (a
        failed attempt may still have been billed for its input)."""
        self.cost.input_tokens += estimate_tokens(messages)
        self.cost.output_tokens += output
