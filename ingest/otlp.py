"""Map an OpenTelemetry trace export (OTLP) to a MemTrace trace batch. Pure: no I/O.

``convert_export`` takes an ``ExportTraceServiceRequest`` (see ``ingest.otlp_decode`` for
protobuf and OTLP/JSON bodies) and returns a dict that validates as ``TraceBatch``. Every span
becomes one operation; none is dropped. Re-sending the same export gives the same batch, so it is
a no-op for the writer.

Operation of a span:

- id ``otel:<trace id>:<span id>`` (hex); ``ts`` its start (its end if the start is 0);
  ``name`` the attribute ``memtrace.operation.name``, else the span name; ``system`` the
  resource's ``service.name``; ``session_id`` the
  attribute ``session.id`` or ``gen_ai.conversation.id`` (span, else resource), else none: a
  trace is one request, not a conversation, and a session id is what scopes a case's evidence
  (``service.attribution.scope``); the trace id is in ``attributes.otel``;
- ``attributes``: the span's attributes as sent, plus ``otel``: trace and span ids, parent span
  id, name, kind, status, start, end, duration, scope, resource attributes, events and links.

Kind, first rule that applies:

1. the attribute ``memtrace.operation.kind`` (one of MemTrace's operation kinds);
2. the GenAI operation the span amounts to (``gen_ai.operation.name``, or OpenInference's and
   OpenLLMetry's own attributes read by ``ingest.otlp_conventions``): ``search_memory`` and
   ``retrieval`` (OpenInference ``RETRIEVER``) -> retrieval;
   ``update_memory`` (also ``create_memory``, ``upsert_memory``) -> update; ``delete_memory``
   -> deletion; ``create_memory_store``, ``delete_memory_store`` -> other; ``embeddings`` ->
   embedding; an LLM call (``chat``, ``text_completion``, ``generate_content``) -> by its place:
   ``response`` if it carries a case (below) or reads retrieved context and no memory write
   follows it among its siblings; ``update`` if it reads retrieved context and a memory write
   follows (Mem0's ADD/UPDATE/DELETE decision); ``extraction`` if a write follows but it reads
   no context (fact extraction); else ``other``;
3. a span carrying a case -> response, unless it has no output of its own (a wrapper whose
   descendant answers: other); anything else -> other.

Units (ids and formats: ``ingest.otlp_units``):

- any span: its input messages and system instructions are consumed as ``message`` / ``prompt``
  units, its output messages produced as ``answer`` units, in whichever convention they are
  written (``ingest.otlp_conventions``), on the span or in the GenAI log records joined to it
  (``ingest.otlp_joined``); an embedding call's inputs make no units (they are texts
  to embed, not turns of a conversation); an LLM call with no output text produces
  ``<operation id>/answer/<i>`` per ``gen_ai.response.finish_reasons``, by id only, until log
  records define them;
- a ``retrieval`` span (OpenInference ``RETRIEVER``: ``input.value``, ``retrieval.documents``;
  GenAI: ``gen_ai.retrieval.query.text``, ``gen_ai.retrieval.documents``) is read as a
  ``search_memory`` with those documents as its records;
- ``search_memory`` consumes a ``query`` unit (``gen_ai.memory.query.text``) and the ``memory``
  version of each record of ``gen_ai.memory.records`` that has an id and content; it produces one
  ``context`` unit per record, in order (rank and score in its attributes). A search reads
  versions and hands the model contexts, as in MemTrace's own graphs: that is what lets the
  attribution tell a fact that was stored but not retrieved from one that was never stored;
- an update produces one ``memory`` version per record of ``gen_ai.memory.records``, else one for
  ``gen_ai.memory.record.id`` with the content of the attribute ``memtrace.memory.content``;
- ``delete_memory`` produces a ``tombstone`` per record id (and consumes the version of a record
  sent with its content);
- ``gen_ai.memory.store.id`` scopes record ids; ``memtrace.inputs`` / ``memtrace.outputs`` (unit
  ids: an array or a JSON list) add edges, e.g. to units sent in another export.

Records that cannot be read are kept in the attributes and reported as warnings (OTLP's partial
success with nothing rejected); the span is still an operation.

Lineage, within one export (siblings are spans of one trace with the same parent, ordered by
start time then span id):

- an LLM call or a case-carrying span reads the context produced by the retrieval siblings since
  the previous LLM sibling, by a retrieval parent, and by retrieval children;
- an LLM call also reads the answers of the previous LLM sibling (a chain of calls);
- a memory write consumes the answers of the latest LLM sibling before it (what decided it) and
  the latest version of the same record seen earlier in the export (read by a search or written
  by a write; a deletion ends the record's chain).

Across exports, units join by id (``ingest.otlp_identity``), and a write of a record this export
has not seen consumes the record's latest stored version (``ingest.otlp_lineage``); the spans of
one trace split over several exports lose the sibling edges between them, which
``memtrace.inputs`` restores.
The rule misreads one shape: an answer and memory writes under one parent (``search, chat,
update_memory``) make the chat an update; a case on it or ``memtrace.operation.kind`` settles it.

Cases: a span with any ``memtrace.case.*`` attribute defines a case (id ``memtrace.case.id``,
else ``<operation id>/case``) with ``question``, ``expected_answer``, ``verdict`` (failed, passed,
unknown) and ``evidence_units`` (unit ids); its answer is the span's first produced unit, else a
descendant's (``ingest.otlp_cases``).

A ``memtrace.*`` attribute with a bad value is ignored with a warning, not the export.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, get_args

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from graph_schema import OperationKind
from ingest import otlp_identity as identity
from ingest import otlp_units as u
from ingest.otlp_cases import CASE_PREFIX, PendingCase, answerer, case_of, id_list
from ingest.otlp_conventions import Reading, read_span
from ingest.otlp_decode import Loc, where
from ingest.otlp_lineage import SpanOp, link
from ingest.otlp_logs import SpanKey
from ingest.otlp_spans import SpanView, spans_of, with_logs

KINDS_BY_OPERATION = {
    "search_memory": "retrieval",
    "retrieval": "retrieval",
    "update_memory": "update",
    "create_memory": "update",
    "upsert_memory": "update",
    "delete_memory": "deletion",
    "create_memory_store": "other",
    "delete_memory_store": "other",
    "embeddings": "embedding",
}
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass
class Converted:
    """The batch, where each of its items came from (``locs[kind][i]``), and warnings.

    What the store must settle before the batch is written: ``lookups`` (``{op, memory_id,
    before}``: the operation also consumes the latest stored version of the record before its
    time) and ``pending`` (cases whose answer is a stored span of their trace)."""

    batch: dict[str, Any]
    locs: dict[str, list[Loc]]
    warnings: list[str]
    lookups: list[dict[str, str]]
    pending: list[PendingCase]


def convert_export(
    request: ExportTraceServiceRequest,
    project: str,
    logs: Mapping[SpanKey, list[dict[str, Any]]] | None = None,
) -> Converted:
    """The trace batch of one OTLP export, with what the store must settle before it is written.
    ``logs``: the GenAI log events stored for its spans (``ingest.otlp_logs``), joined to them."""
    spans = spans_of(request)
    if logs:
        spans = [with_logs(span, logs.get((span.trace_id, span.span_id), [])) for span in spans]
    return _Mapper(project).convert(spans)


class _Mapper:
    def __init__(self, project: str) -> None:
        self.project = project
        self.units: dict[str, dict[str, Any]] = {}
        self.unit_locs: dict[str, Loc] = {}
        self.warnings: list[str] = []

    def convert(self, spans: list[SpanView]) -> Converted:
        ops = [self._local(span) for span in sorted(spans, key=lambda s: s.order)]
        link(ops)
        for op in ops:
            op.inputs += id_list(op, "memtrace.inputs", self._warner(op.span))
            op.outputs += id_list(op, "memtrace.outputs", self._warner(op.span))
        cases, pending = self._cases(ops)
        return Converted(
            batch={
                "project": self.project,
                "units": list(self.units.values()),
                "operations": [_operation(op) for op in ops],
                "cases": [c for c, _ in cases],
            },
            locs={
                "units": [self.unit_locs[i] for i in self.units],
                "operations": [op.span.loc for op in ops],
                "cases": [loc for _, loc in cases],
            },
            warnings=self.warnings,
            lookups=[
                {"op": op.id, "memory_id": entry, "before": _operation_time(op.span)}
                for op in ops
                for entry in op.lookups
            ],
            pending=pending,
        )

    def _cases(
        self, ops: list[SpanOp]
    ) -> tuple[list[tuple[dict[str, Any], Loc]], list[PendingCase]]:
        """The cases marked on spans, each with its answer (``ingest.otlp_cases``), and those
        whose answering span the store must hold."""
        cases: list[tuple[dict[str, Any], Loc]] = []
        pending: list[PendingCase] = []
        for op in ops:
            if not op.has_case:
                continue
            trace = [o for o in ops if o.span.trace_id == op.span.trace_id]
            case = case_of(op, trace, self._warner(op.span))
            if not op.outputs and "memtrace.operation.kind" not in op.span.attributes:
                op.kind = "other"  # a wrapper: its descendant answers, not it
            if case["answer_unit"] is None:
                pending.append(
                    PendingCase(
                        len(cases),
                        case["id"],
                        op.span.trace_id,
                        op.span.span_id,
                        op.span.loc,
                        tuple(map(answerer, trace)),
                    )
                )
            cases.append((case, op.span.loc))
        return cases, pending

    def _add(self, unit: dict[str, Any], span: SpanView) -> str:
        self.units.setdefault(unit["id"], unit)
        self.unit_locs.setdefault(unit["id"], span.loc)
        return str(unit["id"])

    def _warn(self, span: SpanView, key: str, what: str) -> None:
        self.warnings.append(f"{where([*span.loc, 'attributes', key])}: {what}")

    def _warner(self, span: SpanView) -> Callable[[str, str], None]:
        return lambda key, what: self._warn(span, key, what)

    def _local(self, span: SpanView) -> SpanOp:
        """The operation with the units its own attributes define."""
        attrs = span.attributes
        reading = read_span(span)  # whichever convention wrote it (ingest.otlp_conventions)
        name = reading.operation or ""
        override = self._choice(span, "memtrace.operation.kind", get_args(OperationKind))
        is_llm = reading.is_llm
        op = SpanOp(
            span=span,
            id=f"otel:{span.trace_id}:{span.span_id}",
            kind=override or (None if is_llm else KINDS_BY_OPERATION.get(name)),
            is_llm=is_llm,
            has_case=any(k.startswith(CASE_PREFIX) for k in attrs),
        )
        if op.kind is None and not is_llm:
            op.kind = "response" if op.has_case else "other"
        conversation = _session(span)
        op.inputs += [
            self._add(
                identity.message_unit(
                    m, identity.prompt_name(span.name, attrs, m.text), conversation
                ),
                span,
            )
            for m in reading.inputs
        ]
        for i, m in enumerate(reading.outputs):
            answer = u.unit(f"{op.id}/answer/{i}", "answer", m.text, {"role": m.role})
            op.answers.append(self._add(answer, span))
        if is_llm and not reading.outputs:
            # The call answered (a finish reason per choice) but the span holds no text: it
            # comes as log records (ingest.otlp_joined), or was not captured. The answers are
            # named now by the ids the records will define, so a case, a memory write and the
            # next call link to them whichever of spans and logs arrives first.
            op.answers += [f"{op.id}/answer/{i}" for i in range(_choices(attrs))]
        op.outputs += op.answers
        if reading.is_search:
            self._search(op, reading)
        elif KINDS_BY_OPERATION.get(name) == "update":
            self._update(op)
        elif name == "delete_memory":
            self._delete(op)
        return op

    def _records(self, op: SpanOp) -> list[u.Record]:
        value = op.span.attributes.get("gen_ai.memory.records")
        if value is None:
            return []
        found = u.records(value)
        if found is None:
            self._warn(op.span, "gen_ai.memory.records", "not a list of records; kept as sent")
        return found or []

    def _search(self, op: SpanOp, reading: Reading) -> None:
        attrs, span = op.span.attributes, op.span
        store = _text(attrs.get("gen_ai.memory.store.id") or attrs.get("gen_ai.data_source.id"))
        if reading.query is not None:
            op.inputs.append(self._add(u.unit(f"{op.id}/query", "query", reading.query), span))
        documents = reading.documents if reading.documents is not None else self._records(op)
        for rank, record in enumerate(documents):
            if record.record_id is not None and record.content is not None:
                version = u.memory_version(store, record.record_id, record.content)
                op.inputs.append(self._add(version, span))
                op.read_versions.append((version["attributes"]["memory_id"], version["id"]))
            context = u.unit(
                f"{op.id}/context/{rank}",
                "context",
                record.content or "",
                {
                    "rank": rank,
                    "score": record.score,
                    "store_id": store,
                    "record_id": record.record_id,
                },
            )
            op.outputs.append(self._add(context, span))

    def _update(self, op: SpanOp) -> None:
        attrs = op.span.attributes
        store = _text(attrs.get("gen_ai.memory.store.id"))
        record_id = _text(attrs.get("gen_ai.memory.record.id"))
        content = attrs.get("memtrace.memory.content")
        written = [(r.record_id or record_id, r.content) for r in self._records(op)] or [
            (record_id, None if content is None else u.text_of(content))
        ]
        for i, (rid, text) in enumerate(written):
            if rid is None or text is None:
                self._warn(
                    op.span,
                    "gen_ai.memory.record.id",
                    "a write without record id or content: its output is this span's own unit",
                )
                unknown = u.unit(f"{op.id}/memory/{i}", "memory", text or "", {"record_id": rid})
                op.outputs.append(self._add(unknown, op.span))
                continue
            version = u.memory_version(store, rid, text)
            op.outputs.append(self._add(version, op.span))
            op.writes.append((version["attributes"]["memory_id"], version["id"]))

    def _delete(self, op: SpanOp) -> None:
        attrs = op.span.attributes
        store = _text(attrs.get("gen_ai.memory.store.id"))
        ids: list[str] = []
        for record in self._records(op):
            if record.record_id is None:
                continue
            ids.append(record.record_id)
            if record.content is not None:  # it names the version it deletes
                version = u.memory_version(store, record.record_id, record.content)
                op.inputs.append(self._add(version, op.span))
        if not ids and (record_id := _text(attrs.get("gen_ai.memory.record.id"))) is not None:
            ids = [record_id]
        if not ids:
            self._warn(op.span, "gen_ai.memory.record.id", "a deletion without record id")
        for rid in ids:
            stone = u.tombstone(store, rid)
            op.outputs.append(self._add(stone, op.span))
            op.writes.append((stone["attributes"]["memory_id"], stone["id"]))

    def _choice(self, span: SpanView, key: str, allowed: tuple[str, ...]) -> str | None:
        """The attribute's value if it is one of ``allowed``; else None, with a warning (a bad
        value drops that attribute's effect, not the export)."""
        value = span.attributes.get(key)
        if value is None:
            return None
        if value not in allowed:
            self._warn(span, key, f"not one of {', '.join(allowed)}; ignored")
            return None
        return str(value)


def _choices(attrs: dict[str, Any]) -> int:
    """How many choices an LLM call returned: its ``gen_ai.response.finish_reasons``."""
    reasons = attrs.get("gen_ai.response.finish_reasons")
    if isinstance(reasons, list):
        return len(reasons)
    return 0 if reasons in (None, "") else 1


def _session(span: SpanView) -> str | None:
    return next(
        (
            str(s[k])
            for s in (span.attributes, span.resource)
            for k in ("session.id", "gen_ai.conversation.id")
            if s.get(k) not in (None, "")
        ),
        None,
    )


def _operation(op: SpanOp) -> dict[str, Any]:
    span, attrs = op.span, op.span.attributes
    session = _session(span)
    outputs = _unique(op.outputs)
    return {
        "id": op.id,
        # GenAI conventions name LLM spans "chat <model>": every LLM step of a trace would read
        # alike in an attribution; memtrace.operation.name says which step it was.
        "name": (_text(attrs.get("memtrace.operation.name"), 256) or span.name or "(unnamed span)")[
            :256
        ],
        "kind": op.kind,
        "system": _text(span.resource.get("service.name"), 128),
        "session_id": session[:256] if session else None,
        "ts": _operation_time(span),
        "inputs": [x for x in _unique(op.inputs) if x not in outputs],
        "outputs": outputs,
        "attributes": {**attrs, "otel": _otel(span)},
    }


def _otel(span: SpanView) -> dict[str, Any]:
    info: dict[str, Any] = {
        "trace_id": span.trace_id,
        "span_id": span.span_id,
        "parent_span_id": span.parent_span_id,
        "name": span.name,
        "kind": span.kind,
        "status": {"code": span.status_code, "message": span.status_message},
        "start_time_unix_nano": span.start_ns,
        "end_time_unix_nano": span.end_ns,
        "duration_ms": max(0, span.end_ns - span.start_ns) / 1e6,
        "scope": span.scope,
        "resource": span.resource,
    }
    if span.events:
        info["events"] = span.events
    if span.links:
        info["links"] = span.links
    return info


def _operation_time(span: SpanView) -> str:
    return _time(span.start_ns or span.end_ns).isoformat()


def _time(unix_nano: int) -> datetime:
    return _EPOCH + timedelta(microseconds=unix_nano // 1000)


def _unique(ids: list[str]) -> list[str]:
    return list(dict.fromkeys(ids))


def _text(value: Any, limit: int | None = None) -> str | None:
    if value is None or value == "":
        return None
    text = u.text_of(value)
    return text[:limit] if limit else text
