"""The LLM judge: one chat completion per batch of units, on a hard budget of calls, tokens and
failures, and honest about what it gave.

Invariants:

- every HTTP attempt is one call in ``cost.llm_calls`` (the client never retries by itself), and
  an instance (one case) never makes more than ``max_calls`` attempts;
- every request bounds its answer (``max_tokens`` from :func:`.llm_prompt.output_allowance`), and
  a call starts only if its prompt (:func:`service.llm.text.estimate_tokens`) plus that answer
  fits in what is left of the token budget, counted from the ``usage`` the endpoint reports;
- a batch fits the model's context (``context_tokens``): long units are cut to excerpts about the
  question first, then the batch is split;
- an answer that was cut at ``max_tokens``, malformed, or timed out is asked once more, never as
  the identical request: a batch is split in halves, a single unit is asked with a stricter note.
  After ``max_failures`` calls that gave nothing the LLM is not asked again for the case;
- whatever goes wrong, ``judge`` still returns a verdict for every unit (the pre-judge's, else
  ``carries=None``), and :meth:`LLMJudge.info` says how many verdicts came from the LLM, so a
  result that rests on the heuristic says so. Only a refused endpoint (401/403/404) raises
  (:class:`service.llm.client.EndpointRefused`): its settings are wrong and the user must know;
- prompts and unit contents hold user memory: they are logged at debug level only.
"""

from __future__ import annotations

import logging
from collections import Counter
from typing import TYPE_CHECKING

from openai.types import CompletionUsage
from openai.types.chat import ChatCompletionMessageParam

from service.attribution.confidence import UNMEASURED_LLM_VERDICT, UNMEASURED_LLM_WEIGHT
from service.attribution.judges.base import Judge, Question, UnitText, Verdict
from service.attribution.judges.llm_prompt import (
    UNIT_LINE_RE,
    MalformedAnswer,
    answer_schema,
    build_messages,
    output_allowance,
    parse_answer,
    unit_ids_in_prompt,
    unit_line,
)
from service.attribution.models import JudgeInfo
from service.llm.client import Backoff, CallFailed, ChatClient
from service.llm.models import Cost
from service.llm.text import estimate_tokens

if TYPE_CHECKING:
    from openai import AsyncOpenAI

__all__ = [
    "UNIT_LINE_RE",
    "LLMJudge",
    "build_messages",
    "unit_ids_in_prompt",
    "unit_line",
]

logger = logging.getLogger(__name__)

LLM_CONFIDENCE = UNMEASURED_LLM_VERDICT
"""Confidence of a verdict the LLM gave when the model's accuracy was not measured
(``memtrace judge check`` measures it): not an assumed accuracy, see
:data:`service.attribution.confidence.UNMEASURED_LLM_VERDICT`."""

MIN_UNIT_CHARS = 300
"""Below this an excerpt rarely holds a fact with its subject: split the batch instead."""

ALWAYS_ASKED_KINDS = frozenset({"context"})
"""Kinds the LLM is asked about even where the pre-judge is confident. A ResponseError rests on
one verdict alone, that the context the answer was written from carried the information, and
the heuristic's confident "carries" on a context was wrong about 1 time in 6 on the LoCoMo
tuning half (a context of many memories shares the answer's words with another fact): settling
it there cost 7 of the 10 cases ``llm`` lost against ``llm-all``. One more call per case at
most; a context the walk reads is judged once (the cache)."""


class LLMJudge:
    """Judges units with an OpenAI-compatible chat model; one instance per case.

    ``pre`` (the heuristic judge) is asked first. In a batch where it is confident that some
    unit carries the information, it settles the units it is confident about and the LLM only
    sees the doubtful ones; a batch it finds no carrier in goes to the LLM whole, since "none
    of these carries it" is what the walk blames an operation on (and a paraphrase is what a
    lexical judge misses). ``ask_all`` (the ``llm-all`` judge) sends every unit to the LLM; the
    pre-judge's verdicts then only stand in where the LLM gave none. ``connections``
    (:func:`service.llm.client.connections`) lets the caller share one connection pool across
    cases. ``measured_accuracy`` is the model's accuracy on its judge check (None: never
    checked). It is what each LLM verdict weighs in the walk's choices (else
    :data:`~service.attribution.confidence.UNMEASURED_LLM_WEIGHT`) and what a result resting
    on those verdicts reports (``verdict_confidence``; else :data:`LLM_CONFIDENCE`). A model
    below the check's threshold never gets here: ``build_judge`` stands it down.
    """

    def __init__(
        self,
        *,
        base_url: str,
        api_key: str,
        model: str,
        timeout_s: float,
        max_calls: int,
        max_tokens: int,
        pre: Judge | None,
        confident: float = 0.8,
        ask_all: bool = False,
        max_failures: int = 3,
        concurrency: int = 1,
        context_tokens: int = 8192,
        max_unit_chars: int = 1500,
        temperature: float | None = 0.0,
        measured_accuracy: float | None = None,
        connections: AsyncOpenAI | None = None,
    ) -> None:
        self.kind = "llm-all" if ask_all else "llm"
        self.model: str | None = model
        self.cost = Cost()
        self.max_calls = max_calls
        self.max_tokens = max_tokens
        self.pre = pre
        self.confident = float("inf") if ask_all else confident
        self.max_failures = max_failures
        self.context_tokens = context_tokens
        self.max_unit_chars = max_unit_chars
        self.verdict_confidence = LLM_CONFIDENCE if measured_accuracy is None else measured_accuracy
        self.verdict_weight = (
            UNMEASURED_LLM_WEIGHT if measured_accuracy is None else measured_accuracy
        )
        self.failures: Counter[str] = Counter()
        self.llm_verdicts = 0
        self._tokens_spent = 0
        self._chat = ChatClient(
            base_url=base_url,
            api_key=api_key,
            model=model,
            timeout_s=timeout_s,
            concurrency=concurrency,
            temperature=temperature,
            connections=connections,
        )

    async def aclose(self) -> None:
        """Close the HTTP connections, unless the client was lent by the caller."""
        await self._chat.aclose()

    @property
    def call_seconds(self) -> list[float]:
        """Seconds of each HTTP attempt so far (a slot's wait excluded)."""
        return self._chat.call_seconds

    def info(self) -> JudgeInfo:
        """The judge as a result reports it: what the LLM was asked and what it gave."""
        failed = sum(self.failures.values())
        warning = None
        if self.llm_verdicts == 0:
            if self.cost.llm_calls == 0:
                warning = (
                    "the LLM was not asked (the heuristic judge was confident, or the budget "
                    "allowed no call): this result rests on the heuristic judge"
                )
            else:
                reasons = ", ".join(f"{n} {why}" for why, n in sorted(self.failures.items()))
                why = f" ({reasons})" if reasons else ""
                warning = (
                    f"the LLM gave no usable verdict in {self.cost.llm_calls} calls{why}: "
                    "this result rests on the heuristic judge"
                )
        return JudgeInfo(
            kind="llm-all" if self.kind == "llm-all" else "llm",
            model=self.model,
            llm_calls=self.cost.llm_calls,
            llm_verdicts=self.llm_verdicts,
            llm_failures=failed,
            warning=warning,
        )

    async def judge(self, question: Question, units: list[UnitText]) -> dict[str, Verdict]:
        """A verdict for every unit: the pre-judge's if confident, else the LLM's, else unknown."""
        pre = await self.pre.judge(question, units) if self.pre and units else {}
        # "None of these carries it" is what the walk decides on (no evidence among these
        # messages; an operation lost it): the pre-judge settles a batch only when it is
        # confident that one of its units carries; else the LLM sees every unit of the batch.
        # A context is always asked about (ALWAYS_ASKED_KINDS).
        sure = {
            u.id: p
            for u in units
            if (p := pre.get(u.id)) is not None
            and p.carries is not None
            and p.confidence >= self.confident
            and u.kind not in ALWAYS_ASKED_KINDS
        }
        settles = any(p.carries for p in sure.values())
        verdicts: dict[str, Verdict] = {}
        doubtful: dict[str, UnitText] = {}
        for unit in units:
            p = sure.get(unit.id)
            if settles and p is not None:
                verdicts[unit.id] = p
            else:
                doubtful.setdefault(unit.id, unit)
        answered = await self._ask(question, list(doubtful.values())) if doubtful else {}
        for uid in doubtful:
            if uid in answered:
                verdicts[uid] = Verdict(answered[uid], self.verdict_weight, "llm")
                self.llm_verdicts += 1
            elif (p := pre.get(uid)) is not None and p.carries is not None:
                verdicts[uid] = p
            else:
                verdicts[uid] = Verdict(None, 0.0, "llm")
        return verdicts

    def _stopped(self) -> bool:
        return sum(self.failures.values()) >= self.max_failures

    async def _ask(self, question: Question, units: list[UnitText]) -> dict[str, bool]:
        """The LLM's verdicts for the units it answered validly; ``{}`` when it could not."""
        answers: dict[str, bool] = {}
        for batch, unit_chars in self._fitted(question, units):
            answers.update(await self._ask_batch(question, batch, unit_chars, retry=True))
        return answers

    def _fitted(
        self, question: Question, units: list[UnitText]
    ) -> list[tuple[list[UnitText], int]]:
        """``units`` in batches whose prompt and answer fit the model's context, each with the
        excerpt length its units are shown at."""
        chars = self.max_unit_chars
        while True:
            messages = build_messages(question, units, chars)
            needed = estimate_tokens(messages)  # errs long, as fitting a context should
            if needed + output_allowance([u.id for u in units]) <= self.context_tokens:
                return [(units, chars)]
            if chars > MIN_UNIT_CHARS:
                chars = max(MIN_UNIT_CHARS, chars * 2 // 3)
            elif len(units) > 1:
                half = len(units) // 2
                return self._fitted(question, units[:half]) + self._fitted(question, units[half:])
            else:  # one unit at the shortest excerpt: the question itself is long; try anyway
                return [(units, chars)]

    async def _ask_batch(
        self, question: Question, units: list[UnitText], unit_chars: int, *, retry: bool
    ) -> dict[str, bool]:
        strict = not retry and len(units) == 1
        messages = build_messages(question, units, unit_chars, strict=strict)
        ids = [u.id for u in units]
        logger.debug("LLM judge prompt for case %s:\n%s", question.case_id, messages[-1]["content"])
        failure = await self._answer(messages, ids)
        if isinstance(failure, dict):
            return failure
        if failure is None or not retry or self._stopped():
            return {}
        # Asked again, never identically: halves of the batch, or one unit with a stricter note.
        if len(units) == 1:
            return await self._ask_batch(question, units, unit_chars, retry=False)
        half = len(units) // 2
        first = await self._ask_batch(question, units[:half], unit_chars, retry=False)
        return first | await self._ask_batch(question, units[half:], unit_chars, retry=False)

    async def _answer(
        self, messages: list[ChatCompletionMessageParam], ids: list[str]
    ) -> dict[str, bool] | str | None:
        """Verdicts, or the reason the answer gave none (worth asking again, differently), or
        None when no call could be made (budget, failures)."""
        allowance = output_allowance(ids)
        backoff = Backoff()
        while self._fits_budget(messages, allowance):
            try:
                completion = await self._chat.complete(
                    messages,
                    max_tokens=allowance,
                    schema=answer_schema(ids),
                    admit=self._count_call,
                )
            except CallFailed as e:
                self._fail(e.reason)
                if e.reason != "transient":
                    return e.reason
                await backoff.wait(e)  # 429/5xx: the same request is fine
                continue
            self._record_usage(completion.usage, messages, allowance)
            try:  # parsed first: llama.cpp may say "length" of an answer that closed in time
                return parse_answer(completion.content, set(ids))
            except MalformedAnswer:
                cut = completion.finish_reason == "length"
                self._fail("cut at max_tokens" if cut else "malformed")
                logger.debug("LLM judge unusable answer: %r", completion.content)
                return "length" if cut else "malformed"
        logger.info("LLM judge: no call left (%d made)", self.cost.llm_calls)
        return None

    def _count_call(self) -> None:
        self.cost.llm_calls += 1

    def _fail(self, reason: str) -> None:
        self.failures[reason] += 1
        logger.warning(
            "LLM judge: %s (failure %d of %d allowed for the case)",
            reason,
            sum(self.failures.values()),
            self.max_failures,
        )

    def _fits_budget(self, messages: list[ChatCompletionMessageParam], allowance: int) -> bool:
        if self._stopped() or self.cost.llm_calls >= self.max_calls:
            return False
        return self.max_tokens - self._tokens_spent >= estimate_tokens(messages) + allowance

    def _record_usage(
        self,
        usage: CompletionUsage | None,
        messages: list[ChatCompletionMessageParam],
        allowance: int,
    ) -> None:
        if usage is None:  # some compatible servers omit usage: keep the budget honest anyway
            self._tokens_spent += estimate_tokens(messages) + allowance
            return
        self.cost.input_tokens += usage.prompt_tokens
        self.cost.output_tokens += usage.completion_tokens
        self._tokens_spent += usage.prompt_tokens + usage.completion_tokens
