"""The edges between spans: the "Lineage" rules of ``ingest.otlp``, and the LLM calls' kinds.

Siblings are the spans of one trace with one parent, in span order (start time, then ids). All of
it is deterministic in the export, so a re-sent export gets the same edges.

A write of a record the export has not seen before (no search read it, no write wrote it, no
deletion ended it earlier in the export) leaves a lookup (``SpanOp.lookups``): the writer asks
the store for the latest version of that record before the span, in the same transaction
(``service.otlp.lineage_repository``), so that the record's chain does not break where an agent
exported one trace at a time.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from ingest.otlp_spans import SpanView

WRITE_KINDS = frozenset({"update", "deletion"})


@dataclass
class SpanOp:
    """A span on its way to an operation: what it consumes and produces, as unit ids."""

    span: SpanView
    id: str
    kind: str | None  # None: an LLM call whose kind its place decides
    is_llm: bool
    has_case: bool
    inputs: list[str] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)
    answers: list[str] = field(default_factory=list)
    read_versions: list[tuple[str, str]] = field(default_factory=list)  # (memory_id, unit id)
    writes: list[tuple[str, str]] = field(default_factory=list)  # tombstones too
    reads_context: bool = False
    before_write: bool = False
    lookups: list[str] = field(default_factory=list)  # memory ids: the stored latest version


def link(ops: list[SpanOp]) -> None:
    """Add the edges between spans and settle the LLM calls' kinds; ``ops`` in span order."""
    siblings: dict[tuple[str, str | None], list[SpanOp]] = defaultdict(list)
    for op in ops:
        siblings[op.span.group].append(op)
    by_span = {(op.span.trace_id, op.span.span_id): op for op in ops}
    for group in siblings.values():
        _link_siblings(group, siblings, by_span)
    _link_versions(ops)
    for op in ops:
        if op.kind is None:
            op.kind = _llm_kind(op)


def _link_siblings(
    group: list[SpanOp],
    siblings: dict[tuple[str, str | None], list[SpanOp]],
    by_span: dict[tuple[str, str], SpanOp],
) -> None:
    """Context into readers, answers along a chain of LLM calls and into the writes they decide."""
    previous_llm: SpanOp | None = None
    retrievals: list[SpanOp] = []  # since the previous LLM call
    for op in group:
        if op.is_llm or op.has_case:
            parent = by_span.get((op.span.trace_id, op.span.parent_span_id or ""))
            children = siblings.get((op.span.trace_id, op.span.span_id), [])
            sources = [*retrievals, *([parent] if parent else []), *children]
            sources = [s for s in sources if s.kind == "retrieval"]
            op.inputs += [x for s in sources for x in s.outputs]
            op.reads_context = bool(sources)
        if op.is_llm:
            op.inputs += previous_llm.answers if previous_llm else []
            previous_llm, retrievals = op, []
        elif op.kind == "retrieval":
            retrievals.append(op)
        if _is_write(op) and previous_llm is not None:
            op.inputs += previous_llm.answers
    write_follows = False
    for op in reversed(group):
        op.before_write = write_follows
        write_follows = write_follows or _is_write(op)


def _link_versions(ops: list[SpanOp]) -> None:
    """A write consumes the version of its record seen last before it (a deletion ends that);
    a record the export has not seen yet is looked up in the store."""
    latest: dict[str, str] = {}
    seen: set[str] = set()
    for op in ops:
        latest.update(op.read_versions)
        seen.update(entry for entry, _ in op.read_versions)
        for entry, unit_id in op.writes:
            if entry not in seen and entry not in op.lookups:
                op.lookups.append(entry)
            seen.add(entry)
            if (prev := latest.get(entry)) is not None and prev != unit_id:
                op.inputs.append(prev)
            if op.kind == "deletion":
                latest.pop(entry, None)
            else:
                latest[entry] = unit_id


def _is_write(op: SpanOp) -> bool:
    return op.kind in WRITE_KINDS and not op.is_llm


def _llm_kind(op: SpanOp) -> str:
    if op.has_case:
        return "response"
    if op.before_write:
        return "update" if op.reads_context else "extraction"
    return "response" if op.reads_context else "other"
