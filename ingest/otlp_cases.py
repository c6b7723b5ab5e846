"""Cases marked on spans (``memtrace.case.*``) and the answer each one is about.

A case is marked where the user's code knows the question: often its own span around an
instrumented call, which has no output of its own. Its answer is then found among the span's
descendants (``answering``): the last one, in span order, that produced an answer and does not
write memory (an extraction or update call under the same wrapper is the agent remembering the
turn, not answering it). A span with output of its own answers its case itself.

The descendants are looked for in the export first, then among the spans of the same trace
already stored (``service.otlp.lineage_repository``): an SDK exports a span when it ends and a
parent ends after its children, so the answering span is in the same export or an earlier one.
A case neither finds is refused (HTTP 422, nothing written), never stored without its answer:
the exporter logs a 4xx with its message, while a 200's warnings are dropped by the Python
exporter. A queue waiting for the span was not chosen: the span cannot come later, so a case
left in it would wait forever, as silently as before.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, get_args

from graph_schema import Verdict
from ingest import otlp_units as u
from ingest.ids import MAX_ID
from ingest.otlp_decode import Loc
from ingest.otlp_lineage import SpanOp

CASE_PREFIX = "memtrace.case."
NOT_ANSWERS = frozenset({"extraction", "update"})
"""Kinds of an LLM call that decides what to remember: never the answer a case is about."""

Warn = Callable[[str, str], None]
"""``warn(attribute, what)``: report a problem with one attribute of the span at hand."""


@dataclass(frozen=True)
class Answerer:
    """A span that may have produced a case's answer, as the export or the store shows it."""

    span_id: str
    parent_span_id: str | None
    order: tuple[int, str, str]  # span order: start, trace id, span id
    kind: str
    answers: tuple[str, ...]


@dataclass
class PendingCase:
    """A case whose answer is not in the export: the store is asked for the trace's spans."""

    index: int  # in the batch's cases
    case_id: str
    trace_id: str
    span_id: str
    loc: Loc
    known: tuple[Answerer, ...]  # the export's spans of the trace


def answering(span_id: str, spans: Iterable[Answerer]) -> str | None:
    """The answer of a case marked on ``span_id``, from the descendants among ``spans`` (one
    trace): the first answer of the last one, in span order, that answers (module docstring)."""
    children: dict[str | None, list[Answerer]] = {}
    for span in spans:
        children.setdefault(span.parent_span_id, []).append(span)
    found: list[Answerer] = []
    frontier = [span_id]
    while frontier:
        for child in children.pop(frontier.pop(), []):
            found.append(child)
            frontier.append(child.span_id)
    last = last_answerer(found)
    return last.answers[0] if last else None


def last_answerer(spans: Iterable[Answerer]) -> Answerer | None:
    """The last of ``spans``, in span order, that produced an answer and is not memory being
    written: the call a case about them is about (a wrapper span's, or a whole trace's when the
    case is recorded later by trace id, ``service.otlp.trace_cases``)."""
    answers = [s for s in spans if s.answers and s.kind not in NOT_ANSWERS]
    return max(answers, key=lambda s: s.order) if answers else None


def answerer(op: SpanOp) -> Answerer:
    return Answerer(
        op.span.span_id,
        op.span.parent_span_id,
        op.span.order,
        op.kind or "other",
        tuple(op.answers),
    )


def case_of(op: SpanOp, trace: list[SpanOp], warn: Warn) -> dict[str, Any]:
    """The case ``op`` marks; its ``answer_unit`` is None when the export does not hold it.
    ``trace``: the export's spans of the same trace. Bad values are dropped with a warning."""
    attrs = op.span.attributes
    verdict = attrs.get(CASE_PREFIX + "verdict", "unknown")
    if verdict not in get_args(Verdict):
        warn(CASE_PREFIX + "verdict", f"not one of {', '.join(get_args(Verdict))}; ignored")
        verdict = "unknown"
    answer = op.outputs[0] if op.outputs else answering(op.span.span_id, map(answerer, trace))
    return {
        "id": _text(attrs.get(CASE_PREFIX + "id")) or f"{op.id}/case",
        "question": u.text_of(attrs.get(CASE_PREFIX + "question", "")),
        "expected_answer": u.text_of(attrs.get(CASE_PREFIX + "expected_answer", "")),
        "answer_unit": answer,
        "verdict": verdict,
        "evidence_units": id_list(op, CASE_PREFIX + "evidence_units", warn),
        "attributes": {"trace_id": op.span.trace_id, "span_id": op.span.span_id},
    }


def id_list(op: SpanOp, key: str, warn: Warn) -> list[str]:
    """An attribute holding unit ids (an array, or a JSON list); [] with a warning if it is not."""
    value = op.span.attributes.get(key)
    if value is None:
        return []
    ids = u.json_list(value)
    if ids is None or not all(isinstance(i, str) and 0 < len(i) <= MAX_ID for i in ids):
        warn(key, "not a list of unit ids; ignored")
        return []
    return [str(i) for i in ids]


def _text(value: Any) -> str | None:
    return None if value is None or value == "" else u.text_of(value)
