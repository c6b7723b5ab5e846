"""What ``POST /v1/traces`` (an OTLP/HTTP export) answers, and ``GET /otlp/warnings``."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field

from service.models.traces import IngestResult

Encoding = Literal["protobuf", "json"]


class OtlpResult(BaseModel):
    """What an export did: the batch's counts, its span count, and mapping warnings."""

    encoding: Encoding
    spans: int
    ingested: IngestResult
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
