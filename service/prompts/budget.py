"""Chat completions for prompt optimisation on a hard budget of calls and tokens: a budget
policy over the one chat client (:mod:`service.llm.client`).

The endpoint, key, model, timeout and concurrency are the llm judge's (``MEMTRACE_LLM_*``), and
so is the client with its handling of errors: transient ones (connection, timeout, 429, 5xx) are
retried with the same :class:`~service.llm.client.Backoff`, every attempt counts as a call. The
budget is never exceeded, which the judge does not promise (it lets an answer run past its
allowance):

- an attempt starts only when ``calls < max_calls`` and its input estimate
  (:func:`service.llm.text.estimate_tokens`, on the high side of real tokenizers) plus its output
  cap fits in what is left of ``max_tokens``;
- the output cap is sent as the request's ``max_tokens``, so the answer cannot run past it.
What is left is counted from the ``usage`` the endpoint reports (the estimate when it reports
none). Any other failure is :class:`~service.errors.UpstreamFailed`: nothing is stored.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from openai.types.chat import ChatCompletionMessageParam

from service.errors import InvalidInput, UpstreamFailed
from service.llm.client import Backoff, CallFailed, ChatClient, EndpointRefused
from service.llm.models import Cost
from service.llm.text import estimate_tokens
from service.settings import Settings

logger = logging.getLogger(__name__)

RETRIED = frozenset({"transient", "timeout"})


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


class BudgetedChat:
    """One optimisation's connection to the LLM endpoint and what it has spent."""

    def __init__(self, settings: Settings, max_calls: int, max_tokens: int) -> None:
        self.model = settings.llm_model
        self.max_calls = max_calls
        self.max_tokens = max_tokens
        self.cost = Cost()
        self._disabled = False
        self._chat = ChatClient(
            base_url=check_endpoint(settings),
            api_key=settings.llm_api_key.get_secret_value(),
            model=settings.llm_model,
            timeout_s=settings.llm_timeout_s,
            concurrency=settings.llm_concurrency,
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
        await self._chat.aclose()

    async def complete(
        self,
        messages: list[ChatCompletionMessageParam],
        output_tokens: int,
        reserve: tuple[int, int] = (0, 0),
    ) -> Reply:
        """The answer; ``BudgetSpent`` when no attempt is left (beside ``reserve``, see
        ``fits``), ``UpstreamFailed`` when the endpoint refuses."""

        def admit() -> None:  # before every HTTP attempt, the client's own included
            if not self.fits(messages, output_tokens, reserve):
                raise BudgetSpent(
                    f"budget spent: {self.cost.llm_calls} of {self.max_calls} calls, "
                    f"{self.tokens_spent} of {self.max_tokens} tokens"
                )
            self.cost.llm_calls += 1

        backoff = Backoff()
        while True:
            try:
                completion = await self._chat.complete(
                    messages, max_tokens=output_tokens, admit=admit
                )
            except CallFailed as e:
                if e.reason not in RETRIED:
                    raise _upstream_failed(e) from e
                logger.warning("prompt optimisation: %s failure, asking again", e.reason)
                self._spend_estimate(messages, 0)
                await backoff.wait(e)
                continue
            except EndpointRefused as e:
                logger.warning("prompt optimisation: endpoint answered %d", e.status)
                self._disabled = True
                raise _answered(e.status) from e
            usage = completion.usage
            if usage is None:
                self._spend_estimate(messages, output_tokens)
            else:
                self.cost.input_tokens += usage.prompt_tokens
                self.cost.output_tokens += usage.completion_tokens
            return Reply(completion.content, completion.finish_reason)

    def _spend_estimate(self, messages: list[ChatCompletionMessageParam], output: int) -> None:
        """Count a call whose usage is unknown at its estimate, so the budget stays honest (a
        failed attempt may still have been billed for its input)."""
        self.cost.input_tokens += estimate_tokens(messages)
        self.cost.output_tokens += output


def _answered(status: int) -> UpstreamFailed:
    return UpstreamFailed(
        f"the LLM endpoint answered {status}; nothing stored",
        details=[{"loc": ["llm"], "msg": f"HTTP {status}"}],
    )


def _upstream_failed(failure: CallFailed) -> UpstreamFailed:
    """A failure asking again cannot mend, as the optimisation's 502."""
    if failure.status is not None:
        logger.warning("prompt optimisation: endpoint answered %d", failure.status)
        return _answered(failure.status)
    what = type(failure.__cause__).__name__
    return UpstreamFailed(
        f"the LLM endpoint's answer is unusable ({what}); nothing stored",
        details=[{"loc": ["llm"], "msg": what}],
    )
