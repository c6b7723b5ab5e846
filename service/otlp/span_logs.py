"""Accepting an OTLP/HTTP log export: the GenAI events that carry LLM calls' messages, joined
to the spans they belong to whichever of the two arrives first.

The body is read as the traces endpoint reads its own (the same media types, gzip, limits and
errors: ``service.otlp.service``), the records as ``ingest.otlp_logs`` says; the events are
kept per project and span and joined to the stored operations of their spans in one
transaction (``span_logs_repository.keep_and_join``); a trace export converts its spans with
the events kept for them (``service.otlp.service``). Why: ``ingest.otlp_joined``.

Records that are not GenAI message events, or name no span, are rejected the way OTLP says:
a 200 whose partial success counts them, and each reason kept in the project's warnings log
(``GET /otlp/warnings``), where the sender can read it.
"""

from __future__ import annotations

import asyncio

from neo4j import AsyncSession

from ingest.otlp_decode import OtlpFormatError, where
from ingest.otlp_logs import (
    LogEvents,
    TooManyRecords,
    decode_logs_json,
    decode_logs_protobuf,
    genai_events,
)
from service.errors import MalformedRequest, MemTraceError, PayloadTooLarge
from service.otlp import warnings as otlp_warnings
from service.otlp.models import Encoding, OtlpLogsResult
from service.otlp.service import inflate, media_type
from service.otlp.span_logs_repository import keep_and_join
from service.settings import Settings

MAX_REJECTIONS_NAMED = 20
"""Rejected records named one by one in the answer and the warnings log; the rest counted."""


def _read(
    body: bytes, encoding: Encoding, content_encoding: str | None, settings: Settings
) -> LogEvents:
    body = inflate(body, content_encoding, settings.max_batch_bytes)
    decode = decode_logs_protobuf if encoding == "protobuf" else decode_logs_json
    try:
        return genai_events(decode(body, max_records=settings.max_batch_operations))
    except TooManyRecords as e:
        raise PayloadTooLarge(
            f"the export has {e.count} log records; the limit is {e.limit} per export: export "
            "fewer at a time (BatchLogRecordProcessor's max_export_batch_size)",
            details=[
                {
                    "loc": ["body"],
                    "msg": f"over the limit of {e.limit} log records",
                    "max_records": e.limit,
                }
            ],
        ) from e
    except OtlpFormatError as e:
        raise MalformedRequest(e.message, details=[{"loc": e.loc, "msg": e.message}]) from e


def _rejections(found: LogEvents) -> list[str]:
    named = [f"{where(loc)}: {why}; not kept" for loc, why in found.rejected]
    rest = len(named) - MAX_REJECTIONS_NAMED
    if rest > 0:
        named = [*named[:MAX_REJECTIONS_NAMED], f"and {rest} more log record(s) not kept"]
    return named


async def ingest_otlp_logs(
    session: AsyncSession,
    body: bytes,
    content_type: str | None,
    content_encoding: str | None,
    project: str,
    settings: Settings,
) -> OtlpLogsResult:
    """Keep one OTLP log export's GenAI events in ``project`` and join them to the stored
    operations of their spans (a re-send changes nothing). Its warnings, or why it was refused,
    are kept in the project's log, as a trace export's are."""
    try:
        encoding = media_type(content_type)
        found = await asyncio.to_thread(_read, body, encoding, content_encoding, settings)
        kept, joined = (0, 0)
        if found.by_span:
            kept, joined = await keep_and_join(session, project, found.by_span)
    except MemTraceError as e:
        await otlp_warnings.note_refusal(session, project, e)
        raise
    warnings = _rejections(found)
    await otlp_warnings.note(session, project, warnings)
    return OtlpLogsResult(
        encoding=encoding,
        records=found.records,
        events=found.kept,
        new_events=kept,
        spans=len(found.by_span),
        operations_joined=joined,
        rejected=len(found.rejected),
        warnings=warnings,
    )
