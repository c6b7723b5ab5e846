"""Attribution jobs: attributing every failed case of a project as one job that shows its
progress, can be stopped and resumed, and outlives the service process (its state is in Neo4j).

Starting a job fixes its cases (the project's failed cases at that moment) and splits them into
chunks. A case with a stored attribution is skipped unless the job asks for ``refresh``; a case
the job has finished is never done again by it, whether it was stopped, interrupted, taken over
or resumed in between. The work itself is done by the takers of every service process
(:mod:`service.attribution.jobs.runner`), off the request loop; the process that created or
resumed a job is told to take its chunks first.
"""

from __future__ import annotations

import uuid

from neo4j import AsyncSession

from service.attribution.jobs import repository as jobs
from service.attribution.jobs.models import AttributionJob, AttributionJobRequest
from service.attribution.jobs.runner import (
    CHUNK,
    attribute_request,
    head_start_ms,
    nudge,
    worker,
)
from service.attribution.models import AttributionResult
from service.attribution.service import build_judge, close_judge
from service.errors import Conflict, NotFound
from service.settings import Settings


def start_takers(settings: Settings) -> None:
    """Start this process's job takers (``job_pool`` of them; none when 0), which take chunks
    of every process's jobs, and give jobs written before chunks existed their chunks. Called
    once, from the lifespan."""
    if settings.job_pool > 0:
        worker(settings).start()


def _not_found(project: str, job_id: str) -> NotFound:
    return NotFound(
        f"no attribution job {job_id!r} in project {project!r}",
        details=[{"loc": ["path", "job_id"], "msg": "not found"}],
    )


async def start_job(
    session: AsyncSession, project: str, request: AttributionJobRequest, settings: Settings
) -> AttributionJob:
    """Create a job over the project's failed cases, with its chunks, and have this process's
    takers take them first; ``Conflict`` when the project has an active job, ``InvalidInput``
    when the judge cannot run here."""
    attribute = attribute_request(request.judge, request.refresh, request.max_llm_calls)
    await close_judge(build_judge(attribute, settings))  # refuse an llm judge without endpoint
    job = await jobs.create(
        session,
        project,
        uuid.uuid4().hex,
        request,
        settings.job_stale_s,
        CHUNK,
        head_start_ms(settings),
    )
    nudge(project, job.id)
    return job


async def get_job(
    session: AsyncSession, project: str, job_id: str, settings: Settings
) -> AttributionJob:
    job = await jobs.get(session, project, job_id, settings.job_stale_s)
    if job is None:
        raise _not_found(project, job_id)
    return job


async def list_jobs(
    session: AsyncSession, project: str, skip: int, limit: int, settings: Settings
) -> list[AttributionJob]:
    return await jobs.list_jobs(session, project, skip, limit, settings.job_stale_s)


async def stop_job(
    session: AsyncSession, project: str, job_id: str, settings: Settings
) -> AttributionJob:
    """Stop a running or interrupted job (no process takes its chunks any more; a chunk in
    hand is finished and its results kept); a job in another state is returned as it is."""
    if await jobs.stop(session, project, job_id) is None:
        raise _not_found(project, job_id)
    return await get_job(session, project, job_id, settings)


def _refusal(job_id: str, claim: jobs.Claim, stale_s: float) -> Conflict:
    """The 409 for a job that is not stopped or interrupted: a live process works on it, or it
    has ended."""
    if claim.status != "running":
        return Conflict(
            f"attribution job {job_id!r} is {claim.status}: only a stopped or interrupted job "
            "can be resumed",
            details=[{"loc": ["path", "job_id"], "msg": f"job is {claim.status}"}],
        )
    heard = claim.heartbeat_at.isoformat() if claim.heartbeat_at else "never"
    age = f"{claim.heartbeat_age_s:.1f} s ago" if claim.heartbeat_age_s is not None else "never"
    return Conflict(
        f"attribution job {job_id!r} is running: a process working on it was last heard from "
        f"at {heard} ({age}); a job is resumed only when stopped or interrupted (no heartbeat for "
        f"{stale_s:g} s). Follow it, or stop it first.",
        details=[
            {
                "loc": ["path", "job_id"],
                "msg": "a live process works on the job",
                "job": job_id,
                "heartbeat_at": heard,
            }
        ],
    )


async def resume_job(
    session: AsyncSession, project: str, job_id: str, settings: Settings
) -> AttributionJob:
    """Give a stopped or interrupted job back to the takers, its chunks freed from their
    holders at once (a dead process's leases are not waited out) and taken first by this
    process; ``Conflict`` while a process works on it (of concurrent resumes at most one claims
    it). A job written before jobs had chunks gets them here."""
    claim = await jobs.resume(
        session, project, job_id, settings.job_stale_s, head_start_ms(settings)
    )
    if claim is None:
        raise _not_found(project, job_id)
    if not claim.claimed:
        raise _refusal(job_id, claim, settings.job_stale_s)
    await jobs.chunk_job(session, project, job_id, CHUNK)
    nudge(project, job_id)
    return await get_job(session, project, job_id, settings)


async def job_results(
    session: AsyncSession, project: str, job_id: str, skip: int, limit: int, settings: Settings
) -> list[AttributionResult]:
    """The stored attributions of the job's cases, in case id order."""
    await get_job(session, project, job_id, settings)
    return await jobs.results(session, project, job_id, skip, limit)
