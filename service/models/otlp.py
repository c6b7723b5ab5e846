"""What ``POST /v1/traces`` (an OTLP/HTTP export) answers."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

from service.models.traces import IngestResult

Encoding = Literal["protobuf", "json"]


class OtlpResult(BaseModel):
    """What an export did: the batch's counts, its span count, and mapping warnings."""

    encoding: Encoding
    spans: int
    ingested: IngestResult
    warnings: list[str]
