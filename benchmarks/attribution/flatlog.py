"""The flat-log baseline: one LLM call per case over the whole time-ordered operation log.

This is the MemTrace paper's "no graph" comparison in its cheapest form ("all at once", as in
Who&When): the model sees every operation of the conversation's trace, oldest first, each with
the contents of the units it read and wrote, but no edges, plus the question, the expected answer
and the wrong answer, and names ``{"error_type", "op_id"}``. A unit's content is written out the
first time the log mentions it; later mentions name it only (``content shown above``), which
keeps the baseline's prompt as small as a fair flat log can be.

Sent with the real ``openai`` client; tokens are what the endpoint's ``usage`` reports.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from openai import AsyncOpenAI
from openai.types.chat import ChatCompletionMessageParam

SYSTEM_PROMPT = """\
You debug an LLM memory system that answered a user's question wrongly. You get the question, \
the expected (correct) answer, the wrong answer it gave, and the complete log of the operations \
the memory system ran for this conversation, oldest first: each operation with the units \
(messages, memories, queries, retrieved contexts, answers) it read (in) and wrote (out).
Find the earliest decisive faulty operation: its own output is wrong or insufficient for its \
role, and correcting that output alone would have led to the right answer. Its error type is one of:
- ExtractionError: the critical information is never captured into any memory unit.
- UpdateError: a memory unit contained the critical information, a later update removed or \
degraded it.
- DeletionError: a memory unit containing the critical information was explicitly removed.
- RetrievalError: the memory store contained the information, but retrieval did not put it \
into the final context.
- ResponseError: the retrieved context contained the evidence, but the answer is still wrong.
All free texts are JSON strings. Answer with one JSON object and nothing else:
{"error_type": "<one of the five>", "op_id": "<operation id, copied exactly>"}"""

_OP_LINE_RE = re.compile(r'^\[op id=("(?:[^"\\]|\\.)*")\]', re.MULTILINE)
_HEADER_RE = re.compile(r'^(Question|Expected answer): ("(?:[^"\\]|\\.)*")$', re.MULTILINE)


def _q(text: Any) -> str:
    return json.dumps(text, ensure_ascii=False)


def _ts(value: Any) -> float:
    if not value:
        return 0.0
    return datetime.fromisoformat(str(value).replace("Z", "+00:00")).timestamp()


def batch_units(batch: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Every unit a batch defines, top-level or inline in an operation, by id."""
    units = {u["id"]: u for u in batch.get("units", [])}
    for op in batch.get("operations", []):
        for ref in [*op.get("inputs", []), *op.get("outputs", [])]:
            if isinstance(ref, dict):
                units.setdefault(ref["id"], ref)
    return units


@dataclass(frozen=True)
class OperationLog:
    """One batch's flat log: its text, how many operations it holds, and its undeduplicated size."""

    text: str
    operations: int
    full_chars: int  # the log's size had every mention repeated the unit's content


def operation_log(batch: dict[str, Any]) -> OperationLog:
    """Every operation of ``batch``, time-ordered, with its inputs' and outputs' contents."""
    units = batch_units(batch)
    ordered = sorted(enumerate(batch["operations"]), key=lambda p: (_ts(p[1].get("ts")), p[0]))
    shown: set[str] = set()
    lines: list[str] = []
    full = 0
    for _, op in ordered:
        head = (
            f"[op id={_q(op['id'])}] ts={_q(op.get('ts'))} name={_q(op.get('name'))} "
            f"kind={_q(op.get('kind'))} system={_q(op.get('system'))} "
            f"session={_q(op.get('session_id'))}"
        )
        if op.get("attributes"):
            head += f" attributes={_q(op['attributes'])}"
        lines.append(head)
        full += len(head) + 1
        for direction, refs in (("in", op.get("inputs", [])), ("out", op.get("outputs", []))):
            for ref in refs:
                uid = ref["id"] if isinstance(ref, dict) else ref
                unit = units.get(uid, {})
                line = f"  {direction} [id={_q(uid)}] kind={_q(unit.get('kind'))}"
                if unit.get("attributes"):
                    line += f" attributes={_q(unit['attributes'])}"
                content = f" content={_q(unit.get('content') or '')}"
                full += len(line) + len(content) + 1
                lines.append(line + (" (content shown above)" if uid in shown else content))
                shown.add(uid)
    return OperationLog("\n".join(lines), len(ordered), full)


def build_messages(
    log: OperationLog, case: dict[str, Any], wrong_answer: str
) -> list[ChatCompletionMessageParam]:
    """The system and user messages asking about ``case`` over ``log``."""
    header = [
        f"Question: {_q(case['question'])}",
        f"Expected answer: {_q(case['expected_answer'])}",
        f"Wrong answer given: {_q(wrong_answer)}",
    ]
    if case.get("evidence_units"):
        header.append(f"Evidence units: {_q(case['evidence_units'])}")
    header.append(f"Operation log ({log.operations} operations, oldest first):")
    return [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": "\n".join(header) + "\n" + log.text},
    ]


def header_of(prompt: str) -> tuple[str, str]:
    """(question, expected answer) of a flat-log prompt."""
    found: dict[str, str] = {}
    for match in _HEADER_RE.finditer(prompt, 0, 20_000):
        found.setdefault(match.group(1), json.loads(match.group(2)))
    return found.get("Question", ""), found.get("Expected answer", "")


def op_ids_in_log(prompt: str, limit: int | None = None) -> list[str]:
    """The operation ids a flat-log prompt lists, in order (the first ``limit`` of them)."""
    ids = []
    for match in _OP_LINE_RE.finditer(prompt):
        ids.append(json.loads(match.group(1)))
        if limit is not None and len(ids) >= limit:
            break
    return ids


def parse_answer(content: str) -> tuple[str | None, str | None]:
    """(error_type, op_id) from the model's answer; Nones when it is not the asked JSON."""
    try:
        answer = json.loads(content.strip().removeprefix("```json").strip("`\n "))
    except json.JSONDecodeError:
        return None, None
    if not isinstance(answer, dict):
        return None, None
    error_type, op_id = answer.get("error_type"), answer.get("op_id")
    return (
        error_type if isinstance(error_type, str) else None,
        op_id if isinstance(op_id, str) else None,
    )


@dataclass(frozen=True)
class Job:
    """One case to ask the baseline about."""

    key: str
    log: OperationLog
    case: dict[str, Any]
    wrong_answer: str


async def run(
    base_url: str, jobs: list[Job], *, concurrency: int, model: str = "oracle", api_key: str = "x"
) -> tuple[dict[str, dict[str, Any]], float]:
    """Ask about every job, ``concurrency`` at a time: per key the answer and cost; wall seconds."""
    client = AsyncOpenAI(base_url=base_url, api_key=api_key, max_retries=0, timeout=600)
    gate = asyncio.Semaphore(concurrency)
    out: dict[str, dict[str, Any]] = {}

    async def one(job: Job) -> None:
        async with gate:
            messages = build_messages(job.log, job.case, job.wrong_answer)
            started = time.perf_counter()
            record: dict[str, Any] = {"calls": 1, "input_tokens": 0, "output_tokens": 0}
            record["prompt_chars"] = sum(len(str(m.get("content") or "")) for m in messages)
            try:
                response = await client.chat.completions.create(
                    model=model,
                    messages=messages,
                    response_format={"type": "json_object"},
                    temperature=0.0,
                )
            except Exception as e:  # one failed case must not end the benchmark
                record.update(error_type=None, op_id=None, error=f"{type(e).__name__}: {e}")
            else:
                content = response.choices[0].message.content if response.choices else ""
                record["error_type"], record["op_id"] = parse_answer(content or "")
                if response.usage is not None:
                    record["input_tokens"] = response.usage.prompt_tokens
                    record["output_tokens"] = response.usage.completion_tokens
            record["seconds"] = round(time.perf_counter() - started, 4)
            out[job.key] = record

    started = time.perf_counter()
    try:
        await asyncio.gather(*(one(job) for job in jobs))
    finally:
        await client.close()
    return out, time.perf_counter() - started
