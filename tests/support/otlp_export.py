"""Building OTLP trace and log exports in tests with the opentelemetry-proto message classes.

``export(...)`` gives the protobuf ``ExportTraceServiceRequest``; ``as_otlp_json`` the same as
OTLP/JSON (hex ids, lowerCamelCase, 64-bit integers as strings), as an exporter sends it;
``log_export`` and ``as_otlp_logs_json`` do the same for ``ExportLogsServiceRequest``.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from google.protobuf import json_format
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, InstrumentationScope, KeyValue
from opentelemetry.proto.logs.v1.logs_pb2 import LogRecord, ResourceLogs, ScopeLogs
from opentelemetry.proto.resource.v1.resource_pb2 import Resource
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span, Status

T0 = 1_780_000_000_000_000_000  # 2026-05-28, in unix nanoseconds
SECOND = 1_000_000_000


def any_value(value: Any) -> AnyValue:
    if isinstance(value, bool):
        return AnyValue(bool_value=value)
    if isinstance(value, int):
        return AnyValue(int_value=value)
    if isinstance(value, float):
        return AnyValue(double_value=value)
    if isinstance(value, list):
        out = AnyValue()
        out.array_value.values.extend(any_value(v) for v in value)
        return out
    if isinstance(value, dict):
        out = AnyValue()
        out.kvlist_value.values.extend(kv(k, v) for k, v in value.items())
        return out
    return AnyValue(string_value=str(value))


def kv(key: str, value: Any) -> KeyValue:
    return KeyValue(key=key, value=any_value(value))


def trace_id(n: int) -> bytes:
    return n.to_bytes(16, "big")


def span_id(n: int) -> bytes:
    return n.to_bytes(8, "big")


def span(
    trace: int,
    sid: int,
    name: str,
    start_s: float,
    *,
    parent: int | None = None,
    attributes: dict[str, Any] | None = None,
    status_error: bool = False,
) -> Span:
    start = T0 + int(start_s * SECOND)
    return Span(
        trace_id=trace_id(trace),
        span_id=span_id(sid),
        parent_span_id=span_id(parent) if parent else b"",
        name=name,
        kind=Span.SPAN_KIND_INTERNAL,
        start_time_unix_nano=start,
        end_time_unix_nano=start + SECOND // 2,
        attributes=[kv(k, v) for k, v in (attributes or {}).items()],
        status=Status(code=Status.STATUS_CODE_ERROR if status_error else Status.STATUS_CODE_OK),
    )


def export(*spans: Span, service: str = "mem-agent") -> ExportTraceServiceRequest:
    return ExportTraceServiceRequest(
        resource_spans=[
            ResourceSpans(
                resource=Resource(attributes=[kv("service.name", service)]),
                scope_spans=[
                    ScopeSpans(scope=InstrumentationScope(name="test", version="1"), spans=spans)
                ],
            )
        ]
    )


def as_otlp_json(request: ExportTraceServiceRequest) -> dict[str, Any]:
    """OTLP/JSON: the protobuf JSON mapping with trace and span ids in hex."""
    data: dict[str, Any] = json_format.MessageToDict(request)
    for resource_spans in data.get("resourceSpans", []):
        for scope_spans in resource_spans.get("scopeSpans", []):
            for s in scope_spans.get("spans", []):
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in s:
                        s[key] = base64.b64decode(s[key]).hex()
    return data


def records(*items: tuple[str | None, str]) -> str:
    """``gen_ai.memory.records`` as instrumentations send it: a JSON string."""
    return json.dumps([{"id": rid, "content": text} for rid, text in items])


def messages(*items: tuple[str, str]) -> str:
    """``gen_ai.input.messages`` / ``gen_ai.output.messages``: JSON of role + text parts."""
    return json.dumps(
        [{"role": role, "parts": [{"type": "text", "content": text}]} for role, text in items]
    )


def log_record(
    trace: int,
    sid: int,
    event: str,
    at_s: float,
    *,
    body: Any = None,
    attributes: dict[str, Any] | None = None,
) -> LogRecord:
    """A log record of span ``sid`` of trace ``trace``, as the SDK sends an event: its name in
    ``event_name``, its time as observed (instrumentations leave ``time_unix_nano`` unset)."""
    record = LogRecord(
        trace_id=trace_id(trace) if trace else b"",
        span_id=span_id(sid) if sid else b"",
        event_name=event,
        observed_time_unix_nano=T0 + int(at_s * SECOND),
        attributes=[kv(k, v) for k, v in (attributes or {}).items()],
    )
    if body is not None:
        record.body.CopyFrom(any_value(body))
    return record


def log_export(*records: LogRecord, service: str = "mem-agent") -> ExportLogsServiceRequest:
    return ExportLogsServiceRequest(
        resource_logs=[
            ResourceLogs(
                resource=Resource(attributes=[kv("service.name", service)]),
                scope_logs=[
                    ScopeLogs(
                        scope=InstrumentationScope(name="test", version="1"), log_records=records
                    )
                ],
            )
        ]
    )


def as_otlp_logs_json(request: ExportLogsServiceRequest) -> dict[str, Any]:
    """OTLP/JSON of a log export: the protobuf JSON mapping with trace and span ids in hex."""
    data: dict[str, Any] = json_format.MessageToDict(request)
    for resource_logs in data.get("resourceLogs", []):
        for scope_logs in resource_logs.get("scopeLogs", []):
            for record in scope_logs.get("logRecords", []):
                for key in ("traceId", "spanId"):
                    if key in record:
                        record[key] = base64.b64decode(record[key]).hex()
    return data
