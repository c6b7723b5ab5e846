"""What the LLM judge sends and how it reads the answer: prompt lines, the answer's JSON schema,
the output allowance, and a tolerant parser. Pure functions, no I/O.

The prompt lists one unit per line, ``[id=<JSON string>] kind=<JSON string> [said=<JSON string>]
content=<JSON string>`` (:func:`unit_line`); ``said`` is the day the unit was recorded, when known,
so that "yesterday" in it can be read as a date (as the heuristic judge reads it). Every free text
is JSON-quoted, so no content can start a line of its own and :func:`unit_ids_in_prompt` finds
exactly the units asked about.

The answer is ``{"verdicts": {"<asked id>": true|false, ...}}``. With a server that takes a JSON
schema, :func:`answer_schema` names every asked id as a required key and nothing else, so a
grammar-constrained model (llama.cpp, vLLM, Ollama, OpenAI strict mode) can only answer each asked
unit exactly once. The prompt shows no example id a model could copy (a small model copied the
old ``"<unit id, copied exactly>"`` placeholder verbatim); the list form
``{"verdicts": [{"id": ..., "carries": ...}]}`` is still read, since some models prefer it.
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from typing import Any

from openai.types.chat import ChatCompletionMessageParam

from service.attribution.judges.base import Question, UnitText
from service.attribution.judges.dates import MONTHS, WEEKDAYS
from service.llm.text import first_json_object
from service.text import excerpt

UNIT_LINE_RE = re.compile(r'^\[id=("(?:[^"\\]|\\.)*")\] kind=', re.MULTILINE)

SYSTEM_PROMPT = """\
You check the memory of an AI assistant that answered a user's question wrongly.
You get the question, the expected (correct) answer, the wrong answer the assistant gave, \
sometimes evidence (what the user originally said), and a list of units: pieces of text the \
memory system handled (conversation messages, stored memories, retrieved contexts, prompts).
For each unit decide whether it carries the information needed to answer the question \
correctly, that is whether a reader of that unit alone could give the expected answer or \
the fact it rests on. A unit that only mentions the topic, or supports the wrong answer, \
does not carry it. "said=" on a unit's line is the day it was recorded: a relative date in \
it ("yesterday", "three days ago") counts from that day.
All free texts are JSON strings. Answer with one JSON object and nothing else: its key \
"verdicts" maps each unit's id (the JSON string after "id=" on the unit's line) to true \
(it carries the information) or false (it does not), one entry per listed unit, in order."""

STRICT_NOTE = """\
Your previous answer could not be used. Answer with only the JSON object: \
{"verdicts": {...}} with exactly the listed ids as keys and true or false as values. \
No explanation, no other text."""
"""Added to the user message when a single unit is asked again after a failed answer: the
retry must differ from the request that failed (a temperature-0 model repeats itself)."""


def _clip(text: str, limit: int, wanted: str = "") -> str:
    """``text`` within ``limit`` characters: the segments most about ``wanted`` (see
    :func:`service.text.excerpt`), marked with how much was left out."""
    shown, left_out = excerpt(text, wanted, limit) if wanted else (text[:limit], len(text) - limit)
    return shown if left_out <= 0 else f"{shown} [... {left_out} more characters]"


def wanted_words(question: Question) -> str:
    """What a long unit's excerpt is chosen by: the question, the expected answer and the
    evidence (the same words the heuristic judge looks for)."""
    return " ".join((question.question, question.expected_answer, *question.evidence_texts))


def said_day(ts: datetime) -> str:
    """The day a unit was recorded, as a reader resolves "yesterday" from it:
    ``Monday 8 May 2023`` (in the timestamp's own zone; English names, whatever the locale)."""
    weekday, month = WEEKDAYS[ts.weekday()].capitalize(), MONTHS[ts.month - 1].capitalize()
    return f"{weekday} {ts.day} {month} {ts.year}"


def unit_line(unit: UnitText, max_chars: int, wanted: str = "") -> str:
    """One unit as a prompt line; the only place the line format is written. A unit longer
    than ``max_chars`` shows the segments most relevant to ``wanted``, not its head."""
    uid, kind = (json.dumps(text, ensure_ascii=False) for text in (unit.id, unit.kind))
    said = f" said={json.dumps(said_day(unit.ts))}" if unit.ts is not None else ""
    content = json.dumps(_clip(unit.content, max_chars, wanted), ensure_ascii=False)
    return f"[id={uid}] kind={kind}{said} content={content}"


def unit_ids_in_prompt(prompt: str) -> list[str]:
    """The ids of the units a prompt lists, in order (what a scripted test server needs)."""
    return [json.loads(m.group(1)) for m in UNIT_LINE_RE.finditer(prompt)]


def build_messages(
    question: Question, units: list[UnitText], max_unit_chars: int, *, strict: bool = False
) -> list[ChatCompletionMessageParam]:
    """The system and user messages asking about ``units``; ``strict`` adds :data:`STRICT_NOTE`."""

    def q(text: str) -> str:
        return json.dumps(_clip(text, max_unit_chars), ensure_ascii=False)

    lines = [
        f"Question: {q(question.question)}",
        f"Expected answer: {q(question.expected_answer)}",
        f"Wrong answer given: {q(question.wrong_answer)}",
    ]
    if question.evidence_texts:
        lines.append("Evidence:")
        times = [*question.evidence_times, *[None] * len(question.evidence_texts)]
        lines += [
            f"- said={json.dumps(said_day(when))} {q(text)}" if when else f"- {q(text)}"
            for text, when in zip(question.evidence_texts, times, strict=False)
        ]
    lines.append(f"Units ({len(units)}):")
    wanted = wanted_words(question)
    lines += [unit_line(u, max_unit_chars, wanted) for u in units]
    if strict:
        lines.append(STRICT_NOTE)
    return [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": "\n".join(lines)},
    ]


def output_allowance(unit_ids: list[str]) -> int:
    """``max_tokens`` for an answer about ``unit_ids``: a token per character of every quoted
    id (tokenisers of small models split digits one by one: SmolLM2 spent ~13 tokens on
    ``u-8f8a24-000900``) and 8 for its value, separators and the indentation a grammar may emit,
    so an honest answer is never cut and a runaway one stops within a few dozen tokens of it."""
    return 16 + sum(len(json.dumps(uid, ensure_ascii=False)) + 8 for uid in unit_ids)


def answer_schema(unit_ids: list[str]) -> dict[str, Any]:
    """The ``json_schema`` response format for an answer about exactly ``unit_ids``."""
    verdicts = {
        "type": "object",
        "properties": {uid: {"type": "boolean"} for uid in unit_ids},
        "required": list(unit_ids),
        "additionalProperties": False,
    }
    return {
        "type": "json_schema",
        "json_schema": {
            "name": "unit_verdicts",
            "strict": True,
            "schema": {
                "type": "object",
                "properties": {"verdicts": verdicts},
                "required": ["verdicts"],
                "additionalProperties": False,
            },
        },
    }


class MalformedAnswer(ValueError):
    """The answer holds no verdicts object the judge can read."""


def _pairs(verdicts: Any) -> list[tuple[Any, Any]]:
    if isinstance(verdicts, dict):
        return list(verdicts.items())
    if isinstance(verdicts, list):
        return [(v.get("id"), v.get("carries")) for v in verdicts if isinstance(v, dict)]
    raise MalformedAnswer('"verdicts" is neither an object nor a list')


def parse_answer(content: str, asked: set[str]) -> dict[str, bool]:
    """Verdicts for the asked ids the answer names; raises :class:`MalformedAnswer` when the
    answer holds none of them.

    Read: ``{"verdicts": {id: bool}}`` or ``{"verdicts": [{"id", "carries"}]}``. Ids never asked
    and values that are not JSON booleans are ignored; an id answered both ways is left out
    (unknown) rather than guessed.
    """
    value = first_json_object(content)  # a model in text mode may fence it or add a sentence
    if value is None or "verdicts" not in value:
        raise MalformedAnswer('no "verdicts" key')
    found: dict[str, bool] = {}
    contradicted: set[str] = set()
    for uid, carries in _pairs(value["verdicts"]):
        if not isinstance(uid, str) or uid not in asked or not isinstance(carries, bool):
            continue
        if found.get(uid, carries) != carries:
            contradicted.add(uid)
        found[uid] = carries
    verdicts = {k: v for k, v in found.items() if k not in contradicted}
    if not verdicts:
        raise MalformedAnswer("no verdict about an asked unit")
    return verdicts
