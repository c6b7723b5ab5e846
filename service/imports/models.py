"""What ``POST /imports/execution-graph`` answers."""

from __future__ import annotations

from pydantic import BaseModel

from service.traces.models import IngestResult


class ImportResult(BaseModel):
    ingested: IngestResult
    labelled_cases: int
    warnings: list[str]
