"""An OTLP log export (``POST /otlp/v1/logs``) read as the GenAI events it joins to spans. Pure.

OpenTelemetry's GenAI instrumentations can send an LLM call's messages as log records instead of
span attributes: ``opentelemetry-instrumentation-openai-v2`` 2.4b0 with
``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=EVENT_ONLY`` (or ``SPAN_AND_EVENT``) emits one
``gen_ai.client.inference.operation.details`` record per call, the messages in its attributes
``gen_ai.input.messages`` / ``gen_ai.output.messages``; older releases and other
instrumentations emit one record per message (``gen_ai.system.message``, ``gen_ai.user.message``,
``gen_ai.assistant.message``, ``gen_ai.tool.message``, ``gen_ai.choice``), the text in the
record's body. Every such record carries the trace id and span id of the call's span.

Each record is read here as the span event the older conventions put on the span itself
(``ingest.otlp_conventions`` reads those already): its name, its time, and its attributes with
the fields of its body added (``content``, ``message``, ...), marked ``"log": true`` so that a
span's own events and the ones joined to it stay apart. Joined to its span
(``ingest.otlp_joined``), the span then converts as if it had carried the messages itself.

A record that is not one of these events (``ingest.otlp_conventions.MESSAGE_EVENTS``, by its
``event_name`` or, from older SDKs, its ``event.name`` attribute) or names no span is rejected:
OTLP's partial success counts it, and nothing is kept of it. Errors never quote a value of the
body (records hold conversation text, and errors end up in logs).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.logs.v1.logs_pb2 import LogRecord

from ingest.otlp_conventions import MESSAGE_EVENTS
from ingest.otlp_decode import (
    Loc,
    OtlpFormatError,
    _convert_ids,
    _field,
    _items,
    _parse,
    load_json_object,
    where,
)
from ingest.otlp_spans import any_value, attribute_dict

SpanKey = tuple[str, str]
"""(trace id, span id), hex: the span a record belongs to."""

_RECORD_IDS = (("traceId", "trace_id", 16), ("spanId", "span_id", 8))


class TooManyRecords(ValueError):
    """The export has more log records than one export may; counted before any is read."""

    def __init__(self, count: int, limit: int) -> None:
        super().__init__(f"{count} log records over the limit of {limit}")
        self.count = count
        self.limit = limit


@dataclass
class LogEvents:
    """What an export holds for MemTrace: the GenAI events by span, in export order, and where
    the records it rejected were and why."""

    records: int = 0
    by_span: dict[SpanKey, list[dict[str, Any]]] = field(default_factory=dict)
    rejected: list[tuple[Loc, str]] = field(default_factory=list)

    @property
    def kept(self) -> int:
        return sum(len(events) for events in self.by_span.values())


def decode_logs_protobuf(body: bytes, max_records: int | None = None) -> ExportLogsServiceRequest:
    """Parse a binary protobuf ``ExportLogsServiceRequest``; ``TooManyRecords`` past
    ``max_records``."""
    request = ExportLogsServiceRequest()
    try:
        request.ParseFromString(body)
    except DecodeError as e:
        raise OtlpFormatError(
            "body is not a protobuf ExportLogsServiceRequest (the wire format is corrupt or "
            "truncated)",
            ["body"],
        ) from e
    _check_count(
        sum(len(s.log_records) for r in request.resource_logs for s in r.scope_logs), max_records
    )
    return request


def decode_logs_json(body: bytes, max_records: int | None = None) -> ExportLogsServiceRequest:
    """Parse an OTLP/JSON ``ExportLogsServiceRequest`` (hex trace and span ids, as the traces
    endpoint reads them), one record at a time so that an error says where it is."""
    data = load_json_object(body)
    resources = _items(data, "resourceLogs", "resource_logs", [])
    _check_count(_json_record_count(resources), max_records)
    request = ExportLogsServiceRequest()
    for i, resource_logs in enumerate(resources):
        loc: Loc = ["resourceLogs", i]
        out = request.resource_logs.add()
        _parse(_field(resource_logs, "resource", "resource", loc), out.resource, [*loc, "resource"])
        for j, scope_logs in enumerate(_items(resource_logs, "scopeLogs", "scope_logs", loc)):
            scope_loc: Loc = [*loc, "scopeLogs", j]
            scope_out = out.scope_logs.add()
            scope = _field(scope_logs, "scope", "scope", scope_loc)
            _parse(scope, scope_out.scope, [*scope_loc, "scope"])
            for k, record in enumerate(_items(scope_logs, "logRecords", "log_records", scope_loc)):
                record_loc: Loc = [*scope_loc, "logRecords", k]
                if not isinstance(record, dict):
                    raise OtlpFormatError(f"{where(record_loc)} must be a JSON object", record_loc)
                record = dict(record)
                _convert_ids(record, _RECORD_IDS, record_loc)
                _parse(record, scope_out.log_records.add(), record_loc)
    return request


def _json_record_count(resources: list[Any]) -> int:
    def listed(obj: Any, camel: str, snake: str) -> list[Any]:
        value = obj.get(camel, obj.get(snake)) if isinstance(obj, dict) else None
        return value if isinstance(value, list) else []

    return sum(
        len(listed(scope, "logRecords", "log_records"))
        for res in resources
        for scope in listed(res, "scopeLogs", "scope_logs")
    )


def _check_count(count: int, max_records: int | None) -> None:
    if max_records is not None and count > max_records:
        raise TooManyRecords(count, max_records)


def genai_events(request: ExportLogsServiceRequest) -> LogEvents:
    """The export's GenAI message events by the span they belong to (module docstring)."""
    found = LogEvents()
    for i, resource_logs in enumerate(request.resource_logs):
        for j, scope_logs in enumerate(resource_logs.scope_logs):
            for k, record in enumerate(scope_logs.log_records):
                found.records += 1
                loc: Loc = ["resourceLogs", i, "scopeLogs", j, "logRecords", k]
                attributes = attribute_dict(record.attributes)
                name = record.event_name or attributes.pop("event.name", None)
                if name not in MESSAGE_EVENTS:
                    found.rejected.append((loc, "not a GenAI message event"))
                    continue
                key = _span_key(record)
                if key is None:
                    found.rejected.append((loc, "names no span (trace id and span id)"))
                    continue
                found.by_span.setdefault(key, []).append(_event(str(name), record, attributes))
    return found


def _span_key(record: LogRecord) -> SpanKey | None:
    """The record's span, when it names a valid one (16-byte trace id, 8-byte span id, not 0)."""
    trace, span = record.trace_id, record.span_id
    if len(trace) != 16 or len(span) != 8 or not any(trace) or not any(span):
        return None
    return trace.hex(), span.hex()


def _event(name: str, record: LogRecord, attributes: dict[str, Any]) -> dict[str, Any]:
    """The record as a span event of the older GenAI conventions (module docstring)."""
    body = any_value(record.body) if record.HasField("body") else None
    if isinstance(body, dict):
        attributes = {**attributes, **body}
    elif body is not None:
        attributes = {**attributes, "content": body}
    attributes.pop("event.name", None)
    return {
        "name": name,
        "time_unix_nano": record.time_unix_nano or record.observed_time_unix_nano,
        "attributes": attributes,
        "log": True,
    }


def event_json(event: dict[str, Any]) -> str:
    """An event's canonical JSON: how it is stored, and what makes a re-sent record the same."""
    return json.dumps(event, sort_keys=True, separators=(",", ":"))
