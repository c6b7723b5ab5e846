"""Decode an OTLP/HTTP trace export body (protobuf or OTLP/JSON) into ``ExportTraceServiceRequest``.

Both encodings end as the same protobuf message, so the mapping (``ingest.otlp``) has one input.

OTLP/JSON is the protobuf JSON mapping with three differences this module takes care of:
``traceId``/``spanId``/``parentSpanId`` (of spans and links) are hex strings, not base64; field
names are lowerCamelCase (snake_case is accepted too); unknown fields are ignored. The JSON is
parsed one span at a time, so an error names where it is (``resourceSpans[0].scopeSpans[1].
spans[3].startTimeUnixNano``). Error messages never repeat a value from the body: a body holds
memory content, and errors end up in logs.
"""

from __future__ import annotations

import base64
import json
import re
from typing import Any

from google.protobuf import json_format
from google.protobuf.message import DecodeError, Message
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

Loc = list[str | int]

_ID_FIELDS = (("traceId", "trace_id", 16), ("spanId", "span_id", 8))
_PARENT_FIELDS = ("parentSpanId", "parent_span_id", 8)


class OtlpFormatError(ValueError):
    """The body is not a valid OTLP trace export; ``loc`` says where (a path into the request)."""

    def __init__(self, message: str, loc: Loc) -> None:
        super().__init__(message)
        self.message = message
        self.loc = loc


def where(loc: Loc) -> str:
    """``["resourceSpans", 0, "scopeSpans"]`` as ``resourceSpans[0].scopeSpans``."""
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text or "body"


class TooManySpans(ValueError):
    """The export has more spans than one export may; counted before any span is read."""

    def __init__(self, count: int, limit: int) -> None:
        super().__init__(f"{count} spans over the limit of {limit}")
        self.count = count
        self.limit = limit


def _check_count(count: int, max_spans: int | None) -> None:
    if max_spans is not None and count > max_spans:
        raise TooManySpans(count, max_spans)


def decode_protobuf(body: bytes, max_spans: int | None = None) -> ExportTraceServiceRequest:
    """Parse a binary protobuf ``ExportTraceServiceRequest``; ``TooManySpans`` past
    ``max_spans`` (parsing is native code, fast: the spans are counted in the message)."""
    request = ExportTraceServiceRequest()
    try:
        request.ParseFromString(body)
    except DecodeError as e:
        raise OtlpFormatError(
            "body is not a protobuf ExportTraceServiceRequest (the wire format is corrupt or "
            "truncated)",
            ["body"],
        ) from e
    _check_count(
        sum(len(scope.spans) for res in request.resource_spans for scope in res.scope_spans),
        max_spans,
    )
    return request


def load_json_object(body: bytes) -> dict[str, Any]:
    """An OTLP/JSON export's top level (traces or logs), or an ``OtlpFormatError`` saying why
    the body is not one."""
    try:
        data = json.loads(body)
    except UnicodeDecodeError as e:
        raise OtlpFormatError("body is not UTF-8 encoded JSON", ["body"]) from e
    except json.JSONDecodeError as e:
        raise OtlpFormatError(
            f"body is not JSON: {e.msg} at line {e.lineno} column {e.colno}", ["body"]
        ) from e
    except RecursionError as e:  # the parser's own bound on depth (about 1,000 levels)
        raise OtlpFormatError("the JSON is nested too deeply", ["body"]) from e
    if not isinstance(data, dict):
        raise OtlpFormatError("an OTLP/JSON export must be a JSON object", ["body"])
    return data


def decode_json(body: bytes, max_spans: int | None = None) -> ExportTraceServiceRequest:
    """Parse an OTLP/JSON ``ExportTraceServiceRequest``; ``TooManySpans`` past ``max_spans``,
    counted in the parsed JSON before any span is read into the message (the slow part)."""
    data = load_json_object(body)
    _check_count(_json_span_count(data), max_spans)
    request = ExportTraceServiceRequest()
    for i, resource_spans in enumerate(_items(data, "resourceSpans", "resource_spans", [])):
        loc: Loc = ["resourceSpans", i]
        out = request.resource_spans.add()
        _parse(
            _field(resource_spans, "resource", "resource", loc), out.resource, [*loc, "resource"]
        )
        for j, scope_spans in enumerate(_items(resource_spans, "scopeSpans", "scope_spans", loc)):
            scope_loc: Loc = [*loc, "scopeSpans", j]
            scope_out = out.scope_spans.add()
            scope = _field(scope_spans, "scope", "scope", scope_loc)
            _parse(scope, scope_out.scope, [*scope_loc, "scope"])
            for k, span in enumerate(_items(scope_spans, "spans", "spans", scope_loc)):
                span_loc: Loc = [*scope_loc, "spans", k]
                _parse(_span_ids_as_base64(span, span_loc), scope_out.spans.add(), span_loc)
    return request


def _json_span_count(data: dict[str, Any]) -> int:
    """The spans of an OTLP/JSON export, counted where they are well placed (anything else is
    reported by the parsing that follows)."""

    def listed(obj: Any, camel: str, snake: str) -> list[Any]:
        value = obj.get(camel, obj.get(snake)) if isinstance(obj, dict) else None
        return value if isinstance(value, list) else []

    return sum(
        len(listed(scope, "spans", "spans"))
        for res in listed(data, "resourceSpans", "resource_spans")
        for scope in listed(res, "scopeSpans", "scope_spans")
    )


def _items(obj: dict[str, Any], camel: str, snake: str, loc: Loc) -> list[Any]:
    value = _field(obj, camel, snake, loc)
    if value is None:
        return []
    if not isinstance(value, list):
        raise OtlpFormatError(f"{where([*loc, camel])} must be a JSON array", [*loc, camel])
    return value


def _field(obj: Any, camel: str, snake: str, loc: Loc) -> Any:
    if not isinstance(obj, dict):
        raise OtlpFormatError(f"{where(loc)} must be a JSON object", loc)
    return obj.get(camel, obj.get(snake))


_FAILED_FIELD = re.compile(r"Failed to parse (\w+) field")


def _parse(value: Any, message: Message, loc: Loc) -> None:
    if value is None:
        return
    try:
        json_format.ParseDict(value, message, ignore_unknown_fields=True)
    except RecursionError as e:
        raise OtlpFormatError(f"{where(loc)} is nested too deeply", loc) from e
    except (json_format.ParseError, TypeError, ValueError) as e:
        # The parser's own text quotes the offending value; keep only the fields it names.
        path = [*loc, *_FAILED_FIELD.findall(str(e))]
        raise OtlpFormatError(
            f"{where(path)} does not match the OTLP schema (wrong type or value)", path
        ) from e


def _span_ids_as_base64(span: Any, loc: Loc) -> Any:
    """A copy of ``span`` with its hex ids (and its links') in the protobuf JSON form, base64."""
    if not isinstance(span, dict):
        raise OtlpFormatError(f"{where(loc)} must be a JSON object", loc)
    span = dict(span)
    _convert_ids(span, (*_ID_FIELDS, _PARENT_FIELDS), loc)
    links = span.get("links")
    if isinstance(links, list):
        span["links"] = [dict(link) if isinstance(link, dict) else link for link in links]
        for n, link in enumerate(span["links"]):
            if isinstance(link, dict):
                _convert_ids(link, _ID_FIELDS, [*loc, "links", n])
    return span


def _convert_ids(obj: dict[str, Any], fields: tuple[tuple[str, str, int], ...], loc: Loc) -> None:
    for camel, snake, size in fields:
        for key in (camel, snake):
            if key in obj and obj[key] not in (None, ""):
                obj[key] = _hex_to_base64(obj[key], size, [*loc, camel])


def _hex_to_base64(value: Any, size: int, loc: Loc) -> str:
    if isinstance(value, str) and len(value) == 2 * size:
        try:
            return base64.b64encode(bytes.fromhex(value)).decode()
        except ValueError:
            pass  # not hex: the error below
    raise OtlpFormatError(
        f"{where(loc)} must be {2 * size} hex digits (OTLP/JSON encodes ids as hex)", loc
    )
