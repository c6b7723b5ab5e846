"""What ``POST /v1/traces`` and ``POST /v1/logs`` (OTLP/HTTP exports) answer,
``GET /otlp/warnings``, and ``POST /otlp/cases`` (a case recorded later by trace id, its
request ``TraceCaseIn``)."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from memtrace_client.models import TraceCaseIn
from pydantic import BaseModel, Field

from service.cases.models import CaseView
from service.traces.models import IngestResult

Encoding = Literal["protobuf", "json"]


class OtlpResult(BaseModel):
    """What an export did: the batch's counts, its span count, and mapping warnings."""

    encoding: Encoding
    spans: int
    ingested: IngestResult
    warnings: list[str]


class OtlpLogsResult(BaseModel):
    """What a log export did (``POST /otlp/v1/logs``): its records, the GenAI events among them
    and the spans they belong to, what was joined to stored operations, what was rejected."""

    encoding: Encoding
    records: int
    events: int = Field(description="GenAI message events among the records.")
    new_events: int = Field(description="Events not kept before (0 for a re-sent export).")
    spans: int = Field(description="The spans the events belong to.")
    operations_joined: int = Field(
        description="Stored operations of those spans that gained content now; the others get "
        "it when their span arrives."
    )
    rejected: int = Field(description="Records not kept: not GenAI message events, or no span.")
    warnings: list[str]


class OtlpWarning(BaseModel):
    """One thing an OTLP export was told: a warning of an accepted export (status 200) or why
    one was refused (its 4xx status)."""

    at: datetime
    status: int
    message: str


class OtlpWarnings(BaseModel):
    """``GET /otlp/warnings``: a project's newest OTLP warnings, newest first."""

    project: str
    total: int = Field(description="Every warning the project's exports were given, ever.")
    warnings: list[OtlpWarning] = Field(description="The newest ones (at most 100), newest first.")


class TraceCase(BaseModel):
    """``POST /otlp/cases``: the case as stored and where in the trace its parts were found."""

    case: CaseView
    trace_id: str
    span_id: str = Field(description="The answering call's span: its output is the answer.")
    conversation: str | None = Field(description="Its session.id / gen_ai.conversation.id.")
    question_from: Literal["request", "spans"]
    created: bool = Field(description="False: an identical case was stored already.")


__all__ = [
    "Encoding",
    "OtlpLogsResult",
    "OtlpResult",
    "OtlpWarning",
    "OtlpWarnings",
    "TraceCase",
    "TraceCaseIn",
]
