"""Joining GenAI log events to the spans they belong to, whichever arrives first. Pure.

The aim: an instrumentation that sends an LLM call's messages as log records
(``ingest.otlp_logs``) gives the graph, and so the attributions, it gives when it writes them
on the span (its span-only mode). The design follows from that aim:

- A log event joined to its span is read as one of the span's own GenAI events
  (``otlp_spans.with_logs``), which ``ingest.otlp_conventions`` already reads as the call's
  messages. There is one conversion, so the two modes cannot drift apart.
- Logs first: they are kept, per project and span (``service.otlp.span_logs``), and the
  trace export that brings the span is converted with them (``convert_export(logs=...)``).
- Spans first: what the messages add to a stored LLM call is local to it. Its answers were
  already named by the ids the log events define (``ingest.otlp``: an LLM call without text
  names ``<operation>/answer/<i>`` per finish reason), so the case on it, the memory write it
  decided and the next call in the chain already link to them; its kind does not depend on
  text. The messages it read are new inputs, its answers are defined, its ``otel.events``
  gain the log events, and so its fingerprint changes: ``rejoined`` computes the operation
  anew from the stored one (``span_of`` rebuilds the span from ``attributes.otel``), the
  repository sets it in place. Re-converting the whole trace instead was rejected: a trace's
  spans may have come in several exports, each linked as it came, and a whole-trace conversion
  would add sibling edges no export made, so a re-sent export would no longer match.
- Idempotent both ways: the operation is computed from the stored one and every event stored
  for its span, so applying logs again changes nothing, and a re-sent trace export converted
  with the same events is identical to what is stored (no 409).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ingest.otlp import _Mapper, _operation
from ingest.otlp_logs import SpanKey
from ingest.otlp_spans import SpanView, with_logs


@dataclass(frozen=True)
class StoredOperation:
    """An operation as stored: the parts ``rejoined`` reads (inputs and outputs in position
    order)."""

    id: str
    kind: str
    attributes: str | None  # the stored JSON
    inputs: list[str]
    outputs: list[str]


@dataclass
class Rejoined:
    """The operations as their spans with the joined events convert (``OperationIn``-shaped
    dicts) and the units they name that the events define (messages, prompts, answers)."""

    operations: list[dict[str, Any]]
    units: list[dict[str, Any]]


def span_of(stored: StoredOperation) -> SpanView | None:
    """The span an OTLP operation was converted from, rebuilt from its attributes (the span's
    own plus ``otel``, ``ingest.otlp``); None for an operation that did not come from a span."""
    attributes = json.loads(stored.attributes or "{}")
    otel = attributes.pop("otel", None)
    if not isinstance(otel, dict):
        return None
    status = otel.get("status") or {}
    return SpanView(
        loc=["operations", stored.id],
        trace_id=otel["trace_id"],
        span_id=otel["span_id"],
        parent_span_id=otel.get("parent_span_id"),
        name=otel.get("name", ""),
        kind=otel.get("kind", ""),
        start_ns=int(otel.get("start_time_unix_nano") or 0),
        end_ns=int(otel.get("end_time_unix_nano") or 0),
        status_code=status.get("code", ""),
        status_message=status.get("message", ""),
        attributes=attributes,
        resource=otel.get("resource") or {},
        scope=otel.get("scope") or {},
        events=otel.get("events") or [],
        links=otel.get("links") or [],
    )


def rejoined(
    project: str, stored: list[StoredOperation], logs: dict[SpanKey, list[dict[str, Any]]]
) -> Rejoined:
    """Each of ``stored`` with every log event stored for its span (module docstring): its local
    units (the messages it read, its answers) ahead of the inputs and outputs it already had,
    in the order the conversion of the whole export puts them, and its stored kind (which its
    place in the trace decided)."""
    mapper = _Mapper(project)
    operations = []
    for op in stored:
        span = span_of(op)
        if span is None:
            continue
        local = mapper._local(with_logs(span, logs.get((span.trace_id, span.span_id), [])))
        local.kind = op.kind
        local.inputs = [*local.inputs, *op.inputs]
        local.outputs = [*local.outputs, *op.outputs]
        operations.append(_operation(local))
    return Rejoined(operations, list(mapper.units.values()))


def units_of_events(
    project: str, logs: dict[SpanKey, list[dict[str, Any]]]
) -> list[dict[str, Any]]:
    """The units the events define, read as an LLM call's (the span they join may not be
    stored yet): checked before the events are kept, so that an event no span could take (a
    message over a unit's length) is refused at once instead of refusing its span later."""
    mapper = _Mapper(project)
    for (trace_id, span_id), events in sorted(logs.items()):
        call = SpanView(
            loc=["logs", f"{trace_id}:{span_id}"],
            trace_id=trace_id,
            span_id=span_id,
            parent_span_id=None,
            name="",
            kind="",
            start_ns=0,
            end_ns=0,
            status_code="",
            status_message="",
            attributes={"gen_ai.operation.name": "chat"},
            resource={},
            scope={},
        )
        mapper._local(with_logs(call, events))
    return list(mapper.units.values())
