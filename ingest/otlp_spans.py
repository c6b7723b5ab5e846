"""Flatten an ``ExportTraceServiceRequest`` into plain spans: hex ids, Python attribute values.

The mapping rules (``ingest.otlp``) then work on ``SpanView`` only and never touch protobuf.
Ids are checked here, as OTLP requires: a trace id is 16 bytes, a span id 8, neither all zero;
a missing parent span id means a root span. Attribute values become JSON values: arrays lists,
key-value lists dicts, bytes base64 text, non-finite doubles text (JSON has no NaN).
"""

from __future__ import annotations

import base64
import math
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status

from ingest.otlp_decode import Loc, OtlpFormatError, where


@dataclass(frozen=True)
class SpanView:
    """One span with what the mapping needs; ``loc`` says where it was in the request."""

    loc: Loc
    trace_id: str
    span_id: str
    parent_span_id: str | None
    name: str
    kind: str
    start_ns: int
    end_ns: int
    status_code: str
    status_message: str
    attributes: dict[str, Any]
    resource: dict[str, Any]
    scope: dict[str, str]
    events: list[dict[str, Any]] = field(default_factory=list)
    links: list[dict[str, Any]] = field(default_factory=list)

    @property
    def order(self) -> tuple[int, str, str]:
        """Deterministic order of spans: start time, then ids (ties are common in tests)."""
        return (self.start_ns, self.trace_id, self.span_id)

    @property
    def group(self) -> tuple[str, str | None]:
        """Spans with the same trace and parent are siblings."""
        return (self.trace_id, self.parent_span_id)


def spans_of(request: ExportTraceServiceRequest) -> list[SpanView]:
    """Every span of the request, in request order."""
    views: list[SpanView] = []
    for i, resource_spans in enumerate(request.resource_spans):
        resource = attribute_dict(resource_spans.resource.attributes)
        for j, scope_spans in enumerate(resource_spans.scope_spans):
            scope = {"name": scope_spans.scope.name, "version": scope_spans.scope.version}
            for k, span in enumerate(scope_spans.spans):
                loc: Loc = ["resourceSpans", i, "scopeSpans", j, "spans", k]
                views.append(_view(span, loc, resource, scope))
    return views


def with_logs(span: SpanView, events: list[dict[str, Any]]) -> SpanView:
    """``span`` with the log events joined to it (``ingest.otlp_logs``) after its own events, in
    time order (ties in the order given): however often and in whichever order the records came,
    the span reads the same. Joined events it already carries are replaced."""
    own = [e for e in span.events if not e.get("log")]
    if not events and len(own) == len(span.events):
        return span
    joined = sorted(events, key=lambda e: int(e.get("time_unix_nano") or 0))
    return replace(span, events=[*own, *joined])


def _view(span: Span, loc: Loc, resource: dict[str, Any], scope: dict[str, str]) -> SpanView:
    return SpanView(
        loc=loc,
        trace_id=_id(span.trace_id, 16, [*loc, "traceId"]),
        span_id=_id(span.span_id, 8, [*loc, "spanId"]),
        parent_span_id=(
            _id(span.parent_span_id, 8, [*loc, "parentSpanId"]) if span.parent_span_id else None
        ),
        name=span.name,
        kind=_enum_name(Span.SpanKind.Name, span.kind, "SPAN_KIND_"),
        start_ns=span.start_time_unix_nano,
        end_ns=span.end_time_unix_nano,
        status_code=_enum_name(Status.StatusCode.Name, span.status.code, "STATUS_CODE_"),
        status_message=span.status.message,
        attributes=attribute_dict(span.attributes),
        resource=resource,
        scope=scope,
        events=[
            {
                "name": event.name,
                "time_unix_nano": event.time_unix_nano,
                "attributes": attribute_dict(event.attributes),
            }
            for event in span.events
        ],
        links=[
            {
                "trace_id": link.trace_id.hex(),
                "span_id": link.span_id.hex(),
                "attributes": attribute_dict(link.attributes),
            }
            for link in span.links
        ],
    )


def _id(raw: bytes, size: int, loc: Loc) -> str:
    if len(raw) != size or not any(raw):
        raise OtlpFormatError(f"{where(loc)} must be {size} bytes and not all zero", loc)
    return raw.hex()


def _enum_name(name_of: Any, value: int, prefix: str) -> str:
    try:
        return str(name_of(value)).removeprefix(prefix).lower()
    except ValueError:  # an enum value newer than our proto files
        return str(value)


def attribute_dict(pairs: Iterable[KeyValue]) -> dict[str, Any]:
    """OTLP key-value pairs as a dict (a repeated key: the last one wins)."""
    return {pair.key: any_value(pair.value) for pair in pairs}


def any_value(value: AnyValue) -> Any:
    """An ``AnyValue`` as a JSON value."""
    which = value.WhichOneof("value")
    if which == "string_value":
        return value.string_value
    if which == "bool_value":
        return value.bool_value
    if which == "int_value":
        return value.int_value
    if which == "double_value":
        number = value.double_value
        return number if math.isfinite(number) else str(number)
    if which == "array_value":
        return [any_value(v) for v in value.array_value.values]
    if which == "kvlist_value":
        return attribute_dict(value.kvlist_value.values)
    if which == "bytes_value":
        return base64.b64encode(value.bytes_value).decode()
    return None  # unset, or a string-table index (profiles only)
