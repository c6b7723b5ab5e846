"""Accepting an OTLP/HTTP trace export: decompress, decode, map to a batch, write it like any batch.

The mapping is ``ingest.otlp``'s; writing is ``ingest_batch``'s, so an OTLP export is written
like ``POST /traces`` (one transaction, a very large one in parts:
``traces.repository.write_batch``), idempotent when re-sent, and refused with 409 when it
redefines an id. An export whose lineage reaches into earlier exports (a record written before,
a case whose answering span came earlier) is written by ``lineage_repository.write_linked``,
which reads what it needs in the same transaction (a very large one: just before). Inflating,
decoding and mapping are CPU work: they run in a worker thread, off the event loop.

Limits: the compressed body is capped by the app's body limit; spans are counted as the body is
decoded (more than ``max_batch_operations`` is a 413 before any is converted); a gzip body is
inflated only up to ``max_batch_bytes`` (one byte more is a 413), so a small zip bomb costs at
most that much memory, and in at most ``GZIP_MAX_MEMBERS`` members, so inflating is linear in
the body.
"""

from __future__ import annotations

import asyncio
import zlib
from typing import Any

from neo4j import AsyncSession
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from pydantic import ValidationError

from ingest.otlp import Converted, convert_export
from ingest.otlp_decode import (
    Loc,
    OtlpFormatError,
    TooManySpans,
    decode_json,
    decode_protobuf,
    where,
)
from ingest.otlp_logs import SpanKey
from service.errors import (
    InvalidInput,
    MalformedRequest,
    MemTraceError,
    PayloadTooLarge,
    UnsupportedMediaType,
)
from service.otlp import warnings as otlp_warnings
from service.otlp.lineage_repository import write_linked
from service.otlp.models import Encoding, OtlpResult
from service.otlp.span_logs_repository import join_kept, read_span_logs
from service.settings import Settings
from service.traces.models import TraceBatch
from service.traces.service import check_size, ingest_batch

MEDIA_TYPES: dict[str, Encoding] = {
    "application/x-protobuf": "protobuf",
    "application/protobuf": "protobuf",
    "application/json": "json",
}
CONTENT_ENCODINGS = ("gzip", "identity")


def media_type(content_type: str | None) -> Encoding:
    """``protobuf`` or ``json`` from a Content-Type (parameters such as charset are ignored)."""
    essence = (content_type or "").split(";", 1)[0].strip().lower()
    if essence not in MEDIA_TYPES:
        raise UnsupportedMediaType(
            "Content-Type must be application/x-protobuf or application/json (OTLP/HTTP)",
            details=[
                {
                    "loc": ["header", "content-type"],
                    "msg": "not supported",
                    "supported": sorted(MEDIA_TYPES),
                }
            ],
        )
    return MEDIA_TYPES[essence]


GZIP_MAX_MEMBERS = 64
"""A gzip body may be several members end to end (RFC 1952); exporters send one. More than this
many is refused, so a body of tiny members cannot cost more than this many fresh inflaters."""

_GZIP_STEP = 64 * 1024
"""Input fed to the inflater at a time: what follows a member's end is re-copied once per
member, so with at most ``GZIP_MAX_MEMBERS`` members that copying is bounded too."""


def inflate(body: bytes, content_encoding: str | None, limit: int) -> bytes:
    """The body without its Content-Encoding; never more than ``limit`` bytes of output.

    Linear in the body and the output: the input goes through in ``_GZIP_STEP`` pieces (zlib
    hands back what is left after a member's end as a fresh copy; fed the whole rest of the
    body, 400,000 empty members cost 63 s of CPU), and members are capped."""
    encoding = (content_encoding or "identity").strip().lower()
    if encoding == "identity":
        return body
    if encoding != "gzip":
        raise UnsupportedMediaType(
            "Content-Encoding must be gzip or absent",
            details=[
                {
                    "loc": ["header", "content-encoding"],
                    "msg": "not supported",
                    "supported": CONTENT_ENCODINGS,
                }
            ],
        )
    try:
        return _gunzip(memoryview(body), limit)
    except zlib.error as e:
        raise MalformedRequest(
            "the body is not valid gzip (Content-Encoding: gzip)",
            details=[{"loc": ["body"], "msg": "not valid gzip"}],
        ) from e


def _gunzip(body: memoryview, limit: int) -> bytes:
    out = bytearray()
    members = 0
    member: zlib._Decompress | None = None  # the inflater of the member being read
    carried = b""  # input read past the end of the last member: the start of the next one
    position = 0
    while carried or position < len(body):
        if member is None:
            members += 1
            if members > GZIP_MAX_MEMBERS:
                raise MalformedRequest(
                    f"the gzip body has more than {GZIP_MAX_MEMBERS} members; send one",
                    details=[
                        {
                            "loc": ["body"],
                            "msg": f"more than {GZIP_MAX_MEMBERS} gzip members",
                            "max_members": GZIP_MAX_MEMBERS,
                        }
                    ],
                )
            member = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
        if carried:
            piece: bytes | memoryview = carried
            carried = b""
        else:
            piece = body[position : position + _GZIP_STEP]
            position += len(piece)
        out += member.decompress(piece, limit + 1 - len(out))
        if len(out) > limit:
            raise PayloadTooLarge(
                f"the gzip body inflates to more than the limit of {limit} bytes; "
                "send smaller exports",
                details=[{"loc": ["body"], "msg": "inflates over the limit", "max_bytes": limit}],
            )
        if member.eof:
            carried, member = member.unused_data, None
    if member is not None:
        raise MalformedRequest(
            "the gzip body is truncated", details=[{"loc": ["body"], "msg": "truncated"}]
        )
    return bytes(out)


def _decode(
    body: bytes, encoding: Encoding, content_encoding: str | None, settings: Settings
) -> ExportTraceServiceRequest:
    body = inflate(body, content_encoding, settings.max_batch_bytes)
    decode = decode_protobuf if encoding == "protobuf" else decode_json
    try:
        # Spans are counted as the body is decoded, before any is converted: converting takes
        # about 0.2 ms a span, 9 s for an export of 40,000 that would be refused anyway.
        return decode(body, max_spans=settings.max_batch_operations)
    except TooManySpans as e:
        raise PayloadTooLarge(
            f"the export has {e.count} spans; the limit is {e.limit} spans per export: "
            "export fewer spans at a time (BatchSpanProcessor's max_export_batch_size)",
            details=[
                {"loc": ["body"], "msg": f"over the limit of {e.limit} spans", "max_spans": e.limit}
            ],
        ) from e
    except OtlpFormatError as e:
        raise MalformedRequest(e.message, details=[{"loc": e.loc, "msg": e.message}]) from e


def _span_keys(request: ExportTraceServiceRequest) -> list[SpanKey]:
    """The export's spans as (trace id, span id), hex; ids the conversion would refuse are
    left to it."""
    return sorted(
        {
            (span.trace_id.hex(), span.span_id.hex())
            for resource in request.resource_spans
            for scope in resource.scope_spans
            for span in scope.spans
        }
    )


def _convert(
    request: ExportTraceServiceRequest,
    project: str,
    logs: dict[SpanKey, list[dict[str, Any]]],
) -> tuple[TraceBatch, Converted]:
    try:
        converted = convert_export(request, project, logs)
    except OtlpFormatError as e:
        raise MalformedRequest(e.message, details=[{"loc": e.loc, "msg": e.message}]) from e
    try:
        return TraceBatch.model_validate(converted.batch), converted
    except ValidationError as e:
        details = [_span_detail(converted, err) for err in e.errors()]
        first = details[0]
        raise InvalidInput(
            f"{len(details)} span(s) map to invalid MemTrace items; first: {where(first['loc'])}: "
            f"{first['msg']}",
            details=details,
        ) from e


def _span_detail(converted: Converted, err: Any) -> dict[str, Any]:
    """A batch validation error located at the span it came from (never with its input)."""
    loc = list(err["loc"])
    if len(loc) >= 2 and loc[0] in converted.locs and isinstance(loc[1], int):
        span_loc: Loc = converted.locs[loc[0]][loc[1]]
        loc = [*span_loc, str(loc[0]).rstrip("s"), *loc[2:]]
    return {"loc": loc, "msg": err["msg"], "type": err["type"]}


async def ingest_otlp(
    session: AsyncSession,
    body: bytes,
    content_type: str | None,
    content_encoding: str | None,
    project: str,
    settings: Settings,
) -> OtlpResult:
    """Write one OTLP trace export to ``project`` (a re-send changes nothing). Its
    warnings, or why it was refused, are kept in the project's log (``otlp_warnings``)."""
    try:
        result = await _ingest(session, body, content_type, content_encoding, project, settings)
    except MemTraceError as e:
        await otlp_warnings.note_refusal(session, project, e)
        raise
    await otlp_warnings.note(session, project, result.warnings)
    return result


async def _ingest(
    session: AsyncSession,
    body: bytes,
    content_type: str | None,
    content_encoding: str | None,
    project: str,
    settings: Settings,
) -> OtlpResult:
    encoding = media_type(content_type)
    request = await asyncio.to_thread(_decode, body, encoding, content_encoding, settings)
    keys = _span_keys(request)
    # GenAI log events that came before their spans (POST /otlp/v1/logs): the spans convert
    # with them, as if they had carried the messages themselves (ingest.otlp_joined).
    logs = await read_span_logs(session, project, keys)
    batch, converted = await asyncio.to_thread(_convert, request, project, logs)
    if converted.lookups or converted.pending:  # lineage into earlier exports
        check_size(batch, settings)
        ingested = await write_linked(
            session,
            batch,
            converted.lookups,
            converted.pending,
            settings.write_transaction_rows,
        )
    else:
        ingested = await ingest_batch(session, batch, settings)
    # Log events kept while this export was converted were joined to no operation yet: join
    # them now (a no-op, without a write, when none came).
    await join_kept(session, project, keys)
    return OtlpResult(
        encoding=encoding,
        spans=len(batch.operations),
        ingested=ingested,
        warnings=converted.warnings,
    )
