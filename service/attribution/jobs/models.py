"""What the API returns about attribution jobs (``/attribution-jobs``)."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field

from service.attribution.models import JudgeKind

JobStatus = Literal["running", "interrupted", "stopped", "completed", "failed"]
"""``running``: service processes take its chunks. ``interrupted``: it is running, but no process
has been heard of on it for ``job_stale_s`` (those working on it died, or every process is
busy); any process takes its chunks over once their leases expire, or a resume frees them at
once. ``stopped``: asked to stop; resume it. ``completed``: every case is done. ``failed``: a
taker hit an unexpected error."""


class JobFailure(BaseModel):
    """A case the job could not attribute, and why."""

    case_id: str
    message: str | None = None


class AttributionJob(BaseModel):
    """An attribution job over every failed case a project had when it started."""

    id: str
    project: str
    status: JobStatus
    judge: str
    refresh: bool = Field(description="Cases with a stored attribution are attributed again.")
    total: int = Field(description="Cases the job covers (the failed cases at its start).")
    done: int = Field(
        description="Cases finished: attributed + inconclusive + unanswerable + not_failed "
        "(the results this job stored, by status) + skipped + failed."
    )
    attributed: int = Field(
        description="Results this job stored whose status is 'attributed' (an operation blamed)."
    )
    inconclusive: int = Field(
        0, description="Results this job stored whose status is 'inconclusive'."
    )
    unanswerable: int = Field(
        0,
        description="Results this job stored whose status is 'unanswerable' (no source message "
        "carries what the answer needed).",
    )
    not_failed: int = Field(
        0,
        description="Results this job stored whose status is 'not_failed' (the case's verdict "
        "changed after the job started).",
    )
    skipped: int = Field(description="Cases skipped: they had a stored attribution.")
    failed: int = Field(description="Cases that could not be attributed (see failures).")
    on_llm: int = Field(
        0,
        description="Results this job stored that took at least one verdict from the LLM (the "
        "others rest on the heuristic judge alone).",
    )
    failures: list[JobFailure] = Field(description="The first failures, in case id order.")
    error: str | None = Field(None, description="Why the job failed, when it did.")
    created_at: datetime
    updated_at: datetime | None = None
    finished_at: datetime | None = None
    heartbeat_at: datetime | None = Field(
        None,
        description="When a process last took, renewed or stored one of its chunks (Neo4j's "
        "clock).",
    )


class AttributionJobRequest(BaseModel):
    """Body of ``POST /attribution-jobs``; every field optional."""

    judge: JudgeKind = "heuristic"
    refresh: bool = Field(
        False, description="Attribute cases that have a stored attribution again."
    )
    max_llm_calls: int | None = Field(None, ge=0, le=100, description="Per case (llm judge).")
