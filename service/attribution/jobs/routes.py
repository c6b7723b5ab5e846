"""Attribution jobs over HTTP: start one for every failed case of a project, follow its
progress, stop it, resume it, read its results."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Body, Query

from service.attribution.jobs import service as attribution_jobs
from service.attribution.jobs.models import AttributionJob, AttributionJobRequest
from service.attribution.models import AttributionResult
from service.auth import ProjectDep
from service.dependencies import SessionDep, SettingsDep
from service.error_responses import responses

router = APIRouter(prefix="/attribution-jobs", tags=["attribution"])

Skip = Annotated[int, Query(ge=0, le=1_000_000_000)]


@router.post(
    "",
    status_code=202,
    response_model=AttributionJob,
    responses=responses(400, 409, 422, 503),
)
async def post_attribution_job(
    session: SessionDep,
    settings: SettingsDep,
    project: ProjectDep,
    request: Annotated[AttributionJobRequest | None, Body()] = None,
) -> AttributionJob:
    """Attribute every failed case of the project as one job, in the background.

    Answers at once with the job (``id``, ``total``); follow it with ``GET
    /attribution-jobs/{id}``. Cases with a stored attribution are skipped unless ``refresh``.
    409 when the project already has an active (running or interrupted) job.
    """
    return await attribution_jobs.start_job(
        session, project, request or AttributionJobRequest(), settings
    )


@router.get("", response_model=list[AttributionJob], responses=responses(503))
async def get_attribution_jobs(
    session: SessionDep,
    settings: SettingsDep,
    project: ProjectDep,
    skip: Skip = 0,
    limit: Annotated[int, Query(ge=1, le=100)] = 20,
) -> list[AttributionJob]:
    """The project's attribution jobs, newest first."""
    return await attribution_jobs.list_jobs(session, project, skip, limit, settings)


@router.get("/{job_id}", response_model=AttributionJob, responses=responses(404, 503))
async def get_attribution_job(
    job_id: str, session: SessionDep, settings: SettingsDep, project: ProjectDep
) -> AttributionJob:
    """The job's status and progress: ``done`` of ``total`` (attributed, skipped, failed)."""
    return await attribution_jobs.get_job(session, project, job_id, settings)


@router.post("/{job_id}/stop", response_model=AttributionJob, responses=responses(404, 503))
async def stop_attribution_job(
    job_id: str, session: SessionDep, settings: SettingsDep, project: ProjectDep
) -> AttributionJob:
    """Stop the job: no process takes its chunks any more (a chunk in hand is finished); what
    it stored is kept. Resume it later."""
    return await attribution_jobs.stop_job(session, project, job_id, settings)


@router.post(
    "/{job_id}/resume",
    status_code=202,
    response_model=AttributionJob,
    responses=responses(404, 409, 503),
)
async def resume_attribution_job(
    job_id: str, session: SessionDep, settings: SettingsDep, project: ProjectDep
) -> AttributionJob:
    """Go on with a stopped or interrupted job's pending cases (none is done twice).

    A job is interrupted when no process has been heard of on it for ``job_stale_s`` (the
    processes working on it died); any process takes its chunks over by itself once their
    leases expire (``job_lease_s``), and a resume frees them at once. 409 while a process works
    on it: the message names its last heartbeat; of resumes sent at once, at most one wins.
    """
    return await attribution_jobs.resume_job(session, project, job_id, settings)


@router.get(
    "/{job_id}/results", response_model=list[AttributionResult], responses=responses(404, 503)
)
async def get_attribution_job_results(
    job_id: str,
    session: SessionDep,
    settings: SettingsDep,
    project: ProjectDep,
    skip: Skip = 0,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> list[AttributionResult]:
    """The stored attributions of the job's cases, in case id order."""
    return await attribution_jobs.job_results(session, project, job_id, skip, limit, settings)
