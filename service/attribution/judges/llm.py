"""The LLM judge: one chat completion per batch of units, on a hard budget of calls and tokens.

Invariants:

- every HTTP attempt is one call in ``cost.llm_calls`` (the client never retries by itself), and
  an instance (one case) never makes more than ``max_calls`` attempts;
- a call starts only if the prompt (estimated at chars/4) plus 200 answer tokens fits in what is
  left of ``max_tokens``, counted from the ``usage`` the endpoint reports (the answer itself is not
  capped: a ``max_tokens`` request parameter is refused by some models and truncates the JSON);
- whatever goes wrong (budget, transient errors, an answer that stays malformed after one repair),
  ``judge`` still returns a verdict for every unit: the pre-judge's, else ``carries=None``;
- prompts and unit contents hold user memory: they are logged at debug level only.

The prompt lists one unit per line, ``[id=<JSON string>] kind=<JSON string> content=<JSON string>``
(:func:`unit_line`). Every free text is JSON-quoted, so no content can start a line of its own and
:func:`unit_ids_in_prompt` finds exactly the units asked about.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from typing import Any

import openai
from openai import AsyncOpenAI
from openai.types import CompletionUsage
from openai.types.chat import ChatCompletionMessageParam
from pydantic import BaseModel, ConfigDict, StrictBool, ValidationError

from service.attribution.confidence import LLM_VERDICT
from service.attribution.judges.base import Judge, Question, UnitText, Verdict
from service.models.attribution import Cost
from service.text import excerpt

logger = logging.getLogger(__name__)

LLM_CONFIDENCE = LLM_VERDICT
"""Confidence of a verdict the LLM gave: above the heuristic's usual threshold, below certainty."""

BACKOFF_FIRST_S = 0.2
BACKOFF_MAX_S = 5.0
OUTPUT_ALLOWANCE_TOKENS = 200
"""Tokens kept free for the answer when deciding whether a call still fits the token budget."""

TRANSIENT = (openai.APIConnectionError, openai.RateLimitError, openai.InternalServerError)
"""Worth another attempt: timeouts (a subclass of APIConnectionError), 429 and 5xx."""

FATAL_STATUS = {401, 403, 404}
"""Wrong key, model or URL: every later call of this instance would fail the same way."""

ALWAYS_ASKED_KINDS = frozenset({"context"})
"""Kinds the LLM is asked about even where the pre-judge is confident. A ResponseError rests on
one verdict alone, that the context the answer was written from carried the information, and
the heuristic's confident "carries" on a context was wrong about 1 time in 6 on the LoCoMo
tuning half (a context of many memories shares the answer's words with another fact): settling
it there cost 7 of the 10 cases ``llm`` lost against ``llm-all``. One more call per case at
most; a context the walk reads is judged once (the cache)."""

UNIT_LINE_RE = re.compile(r'^\[id=("(?:[^"\\]|\\.)*")\] kind=', re.MULTILINE)

SYSTEM_PROMPT = """\
You check the memory of an AI assistant that answered a user's question wrongly.
You get the question, the expected (correct) answer, the wrong answer the assistant gave, \
sometimes evidence (what the user originally said), and a list of units: pieces of text the \
memory system handled (conversation messages, stored memories, retrieved contexts, prompts).
For each unit decide whether it carries the information needed to answer the question \
correctly, that is whether a reader of that unit alone could give the expected answer or \
the fact it rests on. A unit that only mentions the topic, or supports the wrong answer, \
does not carry it.
All free texts are JSON strings. Answer with one JSON object and nothing else:
{"verdicts": [{"id": "<unit id, copied exactly>", "carries": true}]}
with one entry per unit and "carries" a JSON boolean."""


class _Item(BaseModel):
    model_config = ConfigDict(extra="ignore")

    id: str
    carries: StrictBool


class _Answer(BaseModel):
    """The JSON the model must answer; extra keys (a reason, say) are tolerated and ignored."""

    model_config = ConfigDict(extra="ignore")

    verdicts: list[_Item]


def _clip(text: str, limit: int, wanted: str = "") -> str:
    """``text`` within ``limit`` characters: the segments most about ``wanted`` (see
    :func:`service.text.excerpt`), marked with how much was left out."""
    shown, left_out = excerpt(text, wanted, limit) if wanted else (text[:limit], len(text) - limit)
    return shown if left_out <= 0 else f"{shown} [... {left_out} more characters]"


def wanted_words(question: Question) -> str:
    """What a long unit's excerpt is chosen by: the question, the expected answer and the
    evidence (the same words the heuristic judge looks for)."""
    return " ".join((question.question, question.expected_answer, *question.evidence_texts))


def unit_line(unit: UnitText, max_chars: int, wanted: str = "") -> str:
    """One unit as a prompt line; the only place the line format is written. A unit longer
    than ``max_chars`` shows the segments most relevant to ``wanted``, not its head."""
    uid, kind = (json.dumps(text, ensure_ascii=False) for text in (unit.id, unit.kind))
    content = json.dumps(_clip(unit.content, max_chars, wanted), ensure_ascii=False)
    return f"[id={uid}] kind={kind} content={content}"


def unit_ids_in_prompt(prompt: str) -> list[str]:
    """The ids of the units a prompt lists, in order (what a scripted test server needs)."""
    return [json.loads(m.group(1)) for m in UNIT_LINE_RE.finditer(prompt)]


def build_messages(
    question: Question, units: list[UnitText], max_unit_chars: int
) -> list[ChatCompletionMessageParam]:
    """The system and user messages asking about ``units``."""

    def q(text: str) -> str:
        return json.dumps(_clip(text, max_unit_chars), ensure_ascii=False)

    lines = [
        f"Question: {q(question.question)}",
        f"Expected answer: {q(question.expected_answer)}",
        f"Wrong answer given: {q(question.wrong_answer)}",
    ]
    if question.evidence_texts:
        lines.append("Evidence:")
        lines += [f"- {q(text)}" for text in question.evidence_texts]
    lines.append(f"Units ({len(units)}):")
    wanted = wanted_words(question)
    lines += [unit_line(u, max_unit_chars, wanted) for u in units]
    return [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": "\n".join(lines)},
    ]


def _strip_fence(content: str) -> str:
    """Some endpoints wrap JSON in a Markdown fence even in JSON mode; the fence is harmless."""
    text = content.strip()
    if text.startswith("```"):
        text = text.split("\n", 1)[1] if "\n" in text else ""
        text = text.removesuffix("```").strip()
    return text


def parse_answer(content: str, asked: set[str]) -> dict[str, bool]:
    """Verdicts for the asked ids the answer names; raises ``ValidationError`` when malformed.

    An id answered both ways is left out (unknown) rather than guessed.
    """
    answer = _Answer.model_validate_json(_strip_fence(content))
    found: dict[str, bool] = {}
    contradicted: set[str] = set()
    for item in answer.verdicts:
        if item.id not in asked:
            continue
        if found.get(item.id, item.carries) != item.carries:
            contradicted.add(item.id)
        found[item.id] = item.carries
    return {k: v for k, v in found.items() if k not in contradicted}


def _repair_message(error: ValidationError) -> ChatCompletionMessageParam:
    problems = "; ".join(
        f"{'.'.join(str(p) for p in e['loc']) or 'answer'}: {e['msg']}"
        for e in error.errors(include_url=False)[:5]
    )
    return {
        "role": "user",
        "content": (
            f"Your answer is not valid ({problems}). Answer again with only the JSON object "
            '{"verdicts": [{"id": "<unit id>", "carries": true or false}]}, one entry per unit.'
        ),
    }


def _estimate_tokens(messages: list[ChatCompletionMessageParam]) -> int:
    return sum(len(str(m.get("content") or "")) for m in messages) // 4


class LLMJudge:
    """Judges units with an OpenAI-compatible chat model; one instance per case.

    ``pre`` (the heuristic judge) is asked first. In a batch where it is confident that some
    unit carries the information, it settles the units it is confident about and the LLM only
    sees the doubtful ones; a batch it finds no carrier in goes to the LLM whole, since "none
    of these carries it" is what the walk blames an operation on (and a paraphrase is what a
    lexical judge misses). ``client`` lets the caller share one connection
    pool across cases; it is then used with ``max_retries=0`` and ``timeout_s`` too.
    """

    kind = "llm"

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
        max_unit_chars: int = 1500,
        temperature: float | None = 0.0,
        client: AsyncOpenAI | None = None,
    ) -> None:
        self.model: str | None = model
        self._model = model
        self.cost = Cost()
        self.max_calls = max_calls
        self.max_tokens = max_tokens
        self.pre = pre
        self.confident = confident
        self.max_unit_chars = max_unit_chars
        self.temperature = temperature
        self._tokens_spent = 0
        self._disabled = False
        self._owns_client = client is None
        # max_retries=0: the SDK's own retries would be attempts we neither count nor bound.
        self._client = (
            AsyncOpenAI(base_url=base_url, api_key=api_key, timeout=timeout_s, max_retries=0)
            if client is None
            else client.with_options(max_retries=0, timeout=timeout_s)
        )

    async def aclose(self) -> None:
        """Close the HTTP connections, unless the client was lent by the caller."""
        if self._owns_client:
            await self._client.close()

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
                verdicts[uid] = Verdict(answered[uid], LLM_CONFIDENCE, "llm")
            elif (p := pre.get(uid)) is not None and p.carries is not None:
                verdicts[uid] = p
            else:
                verdicts[uid] = Verdict(None, 0.0, "llm")
        return verdicts

    async def _ask(self, question: Question, units: list[UnitText]) -> dict[str, bool]:
        """The LLM's verdicts for the ids it answered validly; ``{}`` when it could not."""
        messages = build_messages(question, units, self.max_unit_chars)
        asked = {u.id for u in units}
        logger.debug("LLM judge prompt for case %s:\n%s", question.case_id, messages[-1]["content"])
        for attempt in ("first", "repair"):
            content = await self._complete(messages)
            if content is None:
                return {}
            try:
                return parse_answer(content, asked)
            except ValidationError as e:
                logger.warning(
                    "LLM judge: malformed answer for case %s (%s try, %d errors)",
                    question.case_id,
                    attempt,
                    e.error_count(),
                )
                logger.debug("LLM judge malformed answer: %r", content)
                messages = [*messages, {"role": "assistant", "content": content}]
                messages.append(_repair_message(e))
        return {}

    def _fits_budget(self, messages: list[ChatCompletionMessageParam]) -> bool:
        if self._disabled or self.cost.llm_calls >= self.max_calls:
            return False
        needed = _estimate_tokens(messages) + OUTPUT_ALLOWANCE_TOKENS
        return self.max_tokens - self._tokens_spent >= needed

    async def _complete(self, messages: list[ChatCompletionMessageParam]) -> str | None:
        """The assistant's content, retrying transient errors; None when out of budget or failed."""
        delay = BACKOFF_FIRST_S
        while self._fits_budget(messages):
            self.cost.llm_calls += 1
            try:
                response = await self._client.chat.completions.create(
                    model=self._model,
                    messages=messages,
                    response_format={"type": "json_object"},
                    **self._sampling(),
                )
            except TRANSIENT as e:
                logger.warning(
                    "LLM judge: transient %s, call %d", type(e).__name__, self.cost.llm_calls
                )
                if not self._fits_budget(messages):
                    break
                await asyncio.sleep(max(delay, _retry_after(e)))
                delay = min(delay * 2, BACKOFF_MAX_S)
                continue
            except openai.APIStatusError as e:
                logger.warning("LLM judge: endpoint answered %d, not retried", e.status_code)
                if e.status_code in FATAL_STATUS:
                    self._disabled = True
                return None
            except openai.APIError as e:  # e.g. a body that is not a chat completion
                logger.warning("LLM judge: unusable response (%s), not retried", type(e).__name__)
                return None
            self._record_usage(response.usage, messages)
            if not response.choices:
                return ""
            return response.choices[0].message.content or ""
        logger.info("LLM judge: no call left (%d made)", self.cost.llm_calls)
        return None

    def _sampling(self) -> dict[str, Any]:
        return {} if self.temperature is None else {"temperature": self.temperature}

    def _record_usage(
        self, usage: CompletionUsage | None, messages: list[ChatCompletionMessageParam]
    ) -> None:
        if usage is None:  # some compatible servers omit usage: keep the budget honest anyway
            self._tokens_spent += _estimate_tokens(messages) + OUTPUT_ALLOWANCE_TOKENS
            return
        self.cost.input_tokens += usage.prompt_tokens
        self.cost.output_tokens += usage.completion_tokens
        self._tokens_spent += usage.prompt_tokens + usage.completion_tokens


def _retry_after(error: Exception) -> float:
    """A server's small Retry-After (seconds) is honoured; a large one is the budget's business."""
    response = getattr(error, "response", None)
    value = response.headers.get("retry-after") if response is not None else None
    try:
        return min(float(value), BACKOFF_MAX_S) if value else 0.0
    except ValueError:
        return 0.0
