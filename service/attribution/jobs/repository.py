"""Attribution jobs in Neo4j: the job node, the cases it covers, and a batch's results.

A job is ``(:AttributionJob {project, id, status, runner, ...})`` with one
``(job)-[:COVERS]->(:Case)`` per failed case it started with; a relationship's ``state``
(the status of the result the job stored: attributed, inconclusive, unanswerable or not_failed;
or skipped, or failed; absent while pending) is the job's progress. Counts are read from those
states, never kept beside them, so they cannot drift, and a job's summary tells its results
apart by status as a report's totals do. A batch's attributions and states are
written in one transaction, so a service stopped mid-job loses at most the batch in flight, and
none of it half-written.

Liveness is judged by Neo4j's clock alone: heartbeats write ``datetime()``, and reads and
resumes compare it with ``datetime()``, so clocks of different service processes never meet.
How long a silence makes a job interrupted (``stale_s``) is the caller's setting
(``job_stale_s``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from neo4j import AsyncManagedTransaction, AsyncSession
from neo4j.exceptions import ConstraintError

from cypher import query
from service.attribution.jobs.models import AttributionJob, JobFailure
from service.attribution.models import AttributionResult
from service.attribution.repository import store
from service.db import store_errors
from service.errors import Conflict
from service.neo4j_values import native

FAILURES_SHOWN = 20


@dataclass(frozen=True)
class Claim:
    """What a resume found: whether it claimed the job for its runner, the status and last
    heartbeat the job had (with its age by Neo4j's clock), and the job's judge settings."""

    claimed: bool
    status: str
    heartbeat_at: datetime | None
    heartbeat_age_s: float | None
    judge: str
    refresh: bool
    max_llm_calls: int | None


@dataclass(frozen=True)
class PendingCase:
    case_id: str
    attributed: bool  # it has a stored attribution


@dataclass(frozen=True)
class CaseOutcome:
    """What became of one case of a batch: a result to store, skipped, or failed (message)."""

    case_id: str
    state: str  # the result's status (attributed, inconclusive, ...) | skipped | failed
    result: AttributionResult | None = None
    message: str | None = None


def _job(record: Any) -> AttributionJob:
    props = dict(record["job"])
    counts = {c["state"]: c["n"] for c in record["counts"]}
    status = "interrupted" if record["stale"] else props["status"]
    return AttributionJob(
        id=props["id"],
        project=props["project"],
        status=status,
        judge=props["judge"],
        refresh=props["refresh"],
        total=sum(counts.values()),
        done=sum(n for state, n in counts.items() if state is not None),
        attributed=counts.get("attributed", 0),
        inconclusive=counts.get("inconclusive", 0),
        unanswerable=counts.get("unanswerable", 0),
        not_failed=counts.get("not_failed", 0),
        skipped=counts.get("skipped", 0),
        failed=counts.get("failed", 0),
        on_llm=sum(c["on_llm"] for c in record["counts"]),
        failures=[JobFailure(**f) for f in record["failures"]],
        error=props.get("error"),
        created_at=native(props["created_at"]),
        updated_at=native(props.get("updated_at")),
        finished_at=native(props.get("finished_at")),
        heartbeat_at=native(props.get("heartbeat_at")),
    )


async def _read_job(
    tx: AsyncManagedTransaction, project: str, job_id: str, stale_s: float
) -> AttributionJob | None:
    result = await tx.run(
        query("attribution_jobs/get_job"),
        project=project,
        job_id=job_id,
        stale_s=stale_s,
        failures=FAILURES_SHOWN,
    )
    record = await result.single()
    return _job(record) if record else None


async def _conflict(session: AsyncSession, project: str) -> Conflict:
    """The 409 for a second active job in a project, naming the active one."""

    async def work(tx: AsyncManagedTransaction) -> str | None:
        result = await tx.run(query("attribution_jobs/active_job"), project=project)
        record = await result.single()
        return record["id"] if record else None

    active = await session.execute_read(work)
    return Conflict(
        f"project {project!r} has an active attribution job ({active}): follow it, or stop it "
        "(POST /attribution-jobs/{id}/stop) or resume it if it is interrupted",
        details=[{"loc": ["query", "project"], "msg": "a job is active", "job": active}],
    )


@store_errors
async def create(
    session: AsyncSession,
    project: str,
    job_id: str,
    runner: str,
    judge: str,
    refresh: bool,
    max_llm_calls: int | None,
    stale_s: float,
) -> AttributionJob:
    """A new running job over the project's failed cases; ``Conflict`` when one is active."""

    async def work(tx: AsyncManagedTransaction) -> AttributionJob | None:
        await (
            await tx.run(
                query("attribution_jobs/create_job"),
                project=project,
                job_id=job_id,
                runner=runner,
                judge=judge,
                refresh=refresh,
                max_llm_calls=max_llm_calls,
            )
        ).consume()
        return await _read_job(tx, project, job_id, stale_s)

    try:
        job = await session.execute_write(work)
    except ConstraintError as e:
        raise await _conflict(session, project) from e
    assert job is not None  # created in the same transaction
    return job


@store_errors
async def get(
    session: AsyncSession, project: str, job_id: str, stale_s: float
) -> AttributionJob | None:
    """The job with its progress, or None."""
    return await session.execute_read(_read_job, project, job_id, stale_s)


@store_errors
async def list_jobs(
    session: AsyncSession, project: str, skip: int, limit: int, stale_s: float
) -> list[AttributionJob]:
    """The project's jobs, newest first."""

    async def work(tx: AsyncManagedTransaction) -> list[AttributionJob]:
        result = await tx.run(
            query("attribution_jobs/list_jobs"), project=project, skip=skip, limit=limit
        )
        ids = [r["id"] async for r in result]
        jobs = [await _read_job(tx, project, job_id, stale_s) for job_id in ids]
        return [j for j in jobs if j is not None]

    return await session.execute_read(work)


@store_errors
async def stop(session: AsyncSession, project: str, job_id: str) -> str | None:
    """Stop a running or interrupted job; its status afterwards, or None when there is no job."""

    async def work(tx: AsyncManagedTransaction) -> str | None:
        result = await tx.run(query("attribution_jobs/stop_job"), project=project, job_id=job_id)
        record = await result.single()
        return record["status"] if record else None

    return await session.execute_write(work)


@store_errors
async def resume(
    session: AsyncSession, project: str, job_id: str, runner: str, stale_s: float
) -> Claim | None:
    """Hand a stopped or interrupted job to ``runner`` if it is one, in one write transaction
    that locks the job before reading its state, so that of concurrent resumes at most one
    claims it. None when there is no such job; ``Conflict`` when another job of the project is
    active."""

    async def work(tx: AsyncManagedTransaction) -> Claim | None:
        result = await tx.run(
            query("attribution_jobs/resume_job"),
            project=project,
            job_id=job_id,
            runner=runner,
            stale_s=stale_s,
        )
        record = await result.single()
        if record is None:
            return None
        age_ms = record["heartbeat_age_ms"]
        return Claim(
            claimed=record["claimed"],
            status=record["status"],
            heartbeat_at=native(record["heartbeat_at"]),
            heartbeat_age_s=None if age_ms is None else age_ms / 1000,
            judge=record["judge"],
            refresh=record["refresh"],
            max_llm_calls=record["max_llm_calls"],
        )

    try:
        return await session.execute_write(work)
    except ConstraintError as e:
        raise await _conflict(session, project) from e


@store_errors
async def next_cases(
    session: AsyncSession, project: str, job_id: str, after: str, size: int
) -> list[PendingCase]:
    """The job's next ``size`` pending cases with ids after ``after``, in id order."""

    async def work(tx: AsyncManagedTransaction) -> list[PendingCase]:
        result = await tx.run(
            query("attribution_jobs/next_cases"),
            project=project,
            job_id=job_id,
            after=after,
            size=size,
        )
        return [PendingCase(r["case_id"], r["attributed"]) async for r in result]

    return await session.execute_read(work)


@store_errors
async def record_batch(
    session: AsyncSession, project: str, job_id: str, runner: str, outcomes: list[CaseOutcome]
) -> bool:
    """Store a batch's attributions and mark its cases done, in one transaction; whether the
    runner still owns the job (False: it was stopped or resumed elsewhere; end).

    Only cases still pending are marked and stored (each case's relationship is locked before
    it is read), so a case is counted and stored once even when an old runner and a new one
    (after a resume) both finish it.
    """

    async def work(tx: AsyncManagedTransaction) -> bool:
        rows = [
            {
                "case_id": o.case_id,
                "state": o.state,
                "message": o.message,
                "on_llm": o.result is not None and o.result.judge.llm_verdicts > 0,
            }
            for o in outcomes
        ]
        claimed = await tx.run(
            query("attribution_jobs/claim_cases"),
            project=project,
            job_id=job_id,
            runner=runner,
            rows=rows,
        )
        mine = {r["case_id"] async for r in claimed}
        results = [o.result for o in outcomes if o.result is not None and o.case_id in mine]
        if results:
            await store(tx, project, results, job=job_id)
        # The job's lock last: held from here to the commit, not through the writes above,
        # so the heartbeat and resumes never wait for a batch.
        lock = await tx.run(
            query("attribution_jobs/lock_job"), project=project, job_id=job_id, runner=runner
        )
        record = await lock.single()
        return bool(record and record["owned"])

    return await session.execute_write(work)


@store_errors
async def heartbeat(session: AsyncSession, project: str, job_id: str, runner: str) -> bool:
    """Say the runner is alive; whether it still owns the job."""

    async def work(tx: AsyncManagedTransaction) -> bool:
        result = await tx.run(
            query("attribution_jobs/heartbeat"), project=project, job_id=job_id, runner=runner
        )
        record = await result.single()
        return bool(record and record["owned"])

    return await session.execute_write(work)


@store_errors
async def finish(
    session: AsyncSession,
    project: str,
    job_id: str,
    runner: str,
    status: str,
    error: str | None = None,
) -> None:
    """Mark a job the runner owns completed or failed."""

    async def work(tx: AsyncManagedTransaction) -> None:
        await (
            await tx.run(
                query("attribution_jobs/finish_job"),
                project=project,
                job_id=job_id,
                runner=runner,
                status=status,
                error=error,
            )
        ).consume()

    await session.execute_write(work)


@store_errors
async def results(
    session: AsyncSession, project: str, job_id: str, skip: int, limit: int
) -> list[AttributionResult]:
    """The stored attributions of the job's cases, in case id order."""

    async def work(tx: AsyncManagedTransaction) -> list[str]:
        result = await tx.run(
            query("attribution_jobs/job_results"),
            project=project,
            job_id=job_id,
            skip=skip,
            limit=limit,
        )
        return [r["result"] async for r in result]

    return [AttributionResult.model_validate_json(s) for s in await session.execute_read(work)]
