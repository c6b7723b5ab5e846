"""``POST /otlp/v1/traces``: OpenTelemetry's OTLP/HTTP trace export, mapped to MemTrace;
``POST /otlp/v1/logs``: its log export, whose GenAI message events join their spans
(``service.otlp.span_logs``).

Point an OTLP exporter at ``http://<memtrace>/otlp``: ``OTEL_EXPORTER_OTLP_ENDPOINT`` appends
``/v1/traces``, an exporter's ``endpoint=`` argument is used as given; both URLs take exports.
The project comes from the ``project`` query parameter or the ``X-MemTrace-Project`` header
(exporters can set headers more easily than query strings); when both are given they must agree,
and with neither it is ``default``. The answer is OTLP's ``ExportTraceServiceResponse``, in the
request's encoding; the JSON one also carries MemTrace's counts under ``memtrace``. Errors are
MemTrace's JSON error bodies, in both encodings.

``GET /otlp/warnings`` lists what the project's exports were warned about or refused for:
exporters drop the warnings of an accepted export and only log a refusal.

``POST /otlp/cases`` records a case after the fact on a stored trace, by its id
(``service.otlp.trace_cases``).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Header, Request, Response
from fastapi.responses import JSONResponse
from google.protobuf import json_format
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
    ExportLogsPartialSuccess,
    ExportLogsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTracePartialSuccess,
    ExportTraceServiceResponse,
)

from service.auth import PrincipalDep, ProjectDep, batch_project
from service.dependencies import SessionDep, SettingsDep, StoresDep, writable_project_session
from service.error_responses import responses
from service.otlp import warnings as otlp_warnings
from service.otlp.models import OtlpResult, OtlpWarnings, TraceCase, TraceCaseIn
from service.otlp.service import ingest_otlp
from service.otlp.span_logs import ingest_otlp_logs
from service.otlp.trace_cases import record_trace_case

router = APIRouter(tags=["ingestion"])

_BODY = {"schema": {"type": "string", "format": "binary"}}
_OPENAPI = {
    "requestBody": {
        "required": True,
        "content": {"application/x-protobuf": _BODY, "application/json": {"schema": {}}},
    }
}


# An exporter's `endpoint=` argument is the whole URL (only OTEL_EXPORTER_OTLP_ENDPOINT gets
# /v1/traces appended): pointing either at .../otlp must work, so /otlp takes exports too.
@router.post("/otlp", include_in_schema=False)
@router.post(
    "/otlp/v1/traces",
    responses={
        200: {
            "description": "Accepted: ExportTraceServiceResponse, in the request's encoding",
            "content": {"application/x-protobuf": _BODY, "application/json": {"schema": {}}},
        },
        **responses(400, 409, 413, 415, 422, 503),
    },
    openapi_extra=_OPENAPI,
)
async def post_otlp_traces(
    request: Request,
    session: SessionDep,
    settings: SettingsDep,
    project: ProjectDep,
    content_type: Annotated[str | None, Header()] = None,
    content_encoding: Annotated[str | None, Header()] = None,
) -> Response:
    """Write an OTLP trace export (protobuf or OTLP/JSON, optionally gzip) as one trace batch.

    Each span becomes an operation; GenAI memory spans (search_memory, update_memory,
    delete_memory) and LLM calls also become units and edges (see ``ingest.otlp``). Re-sending
    the same export is safe.
    """
    result = await ingest_otlp(
        session,
        await request.body(),
        content_type,
        content_encoding,
        project,
        settings,
    )
    return _answer(result)


@router.post(
    "/otlp/v1/logs",
    responses={
        200: {
            "description": "Accepted: ExportLogsServiceResponse, in the request's encoding "
            "(partial success counts the records not kept)",
            "content": {"application/x-protobuf": _BODY, "application/json": {"schema": {}}},
        },
        **responses(400, 409, 413, 415, 422, 503),
    },
    openapi_extra=_OPENAPI,
)
async def post_otlp_logs(
    request: Request,
    session: SessionDep,
    settings: SettingsDep,
    project: ProjectDep,
    content_type: Annotated[str | None, Header()] = None,
    content_encoding: Annotated[str | None, Header()] = None,
) -> Response:
    """Keep an OTLP log export's GenAI message events (protobuf or OTLP/JSON, optionally gzip)
    and join each to its span's operation, whichever arrives first: an instrumentation that
    sends messages as log records (``gen_ai.client.inference.operation.details``,
    ``gen_ai.user.message``, ``gen_ai.choice``, ...) gives the graph it gives when it writes
    them on its spans. Other records are counted as rejected. Re-sending is safe.
    """
    result = await ingest_otlp_logs(
        session, await request.body(), content_type, content_encoding, project, settings
    )
    answer = ExportLogsServiceResponse()
    if result.rejected or result.warnings:
        answer.partial_success.CopyFrom(
            ExportLogsPartialSuccess(
                rejected_log_records=result.rejected, error_message="; ".join(result.warnings)
            )
        )
    if result.encoding == "protobuf":
        return Response(answer.SerializeToString(), media_type="application/x-protobuf")
    body: dict[str, Any] = json_format.MessageToDict(answer)
    body.setdefault("partialSuccess", {})
    body["memtrace"] = result.model_dump(exclude={"encoding"})
    return JSONResponse(body)


@router.get("/otlp/warnings", response_model=OtlpWarnings, responses=responses(503))
async def get_otlp_warnings(session: SessionDep, project: ProjectDep) -> OtlpWarnings:
    """The project's newest OTLP warnings (at most 100, newest first) and how many there were:
    the warnings of accepted exports (a bad attribute value, a record that cannot be read) and
    why exports were refused (a case without answer, a redefined id, an undecodable body)."""
    return await otlp_warnings.recent(session, project)


@router.post("/otlp/cases", response_model=TraceCase, responses=responses(400, 404, 409, 422, 503))
async def post_otlp_case(
    given: TraceCaseIn,
    request: Request,
    stores: StoresDep,
    settings: SettingsDep,
    principal: PrincipalDep,
) -> TraceCase:
    """Record a case on a trace already exported, by its id, when the verdict comes later.

    The answer is the output of the trace's last answering LLM call, the question the last user
    message it read (unless ``question`` is given), the conversation its ``session.id``. The
    project is the body's, else the query's or header's. 404: no span of the trace is stored in
    the project; 422: none of its spans answered. Re-sending the same case is a 200 that changes
    nothing; the same id with other content is a 409.
    """
    project, _ = batch_project(request, principal, given.project)
    async with writable_project_session(stores, project) as session:
        return await record_trace_case(session, project, given, settings)


def _answer(result: OtlpResult) -> Response:
    answer = ExportTraceServiceResponse()
    if result.warnings:  # OTLP's way to warn while accepting everything: rejected_spans = 0
        shown = "; ".join(result.warnings[:20])
        more = f" (and {len(result.warnings) - 20} more)" if len(result.warnings) > 20 else ""
        answer.partial_success.CopyFrom(ExportTracePartialSuccess(error_message=shown + more))
    if result.encoding == "protobuf":
        return Response(answer.SerializeToString(), media_type="application/x-protobuf")
    body: dict[str, Any] = json_format.MessageToDict(answer)
    body.setdefault("partialSuccess", {})
    body["memtrace"] = {
        **result.ingested.model_dump(),
        "spans": result.spans,
        "warnings": result.warnings,
    }
    return JSONResponse(body)
