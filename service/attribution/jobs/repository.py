"""Attribution jobs in Neo4j: the job node, the cases it covers, its chunks, and a chunk's
results.

A job is ``(:AttributionJob {project, id, status, ...})`` with one ``(job)-[:COVERS]->(:Case)``
per failed case it started with; a relationship's ``state`` (the status of the result the job
stored: attributed, inconclusive, unanswerable or not_failed; or skipped, or failed; absent
while pending) is the job's progress. Counts are read from those states, never kept beside
them, so they cannot drift, and a job's summary tells its results apart by status as a
report's totals do.

The cases are split, in id order, into ``(:JobChunk {project, job_id, seq})`` nodes
(``(chunk)-[:CHUNK_OF]->(job)``, ``(chunk)-[:TAKES]->(case)``) made in the job's own write
transaction: the unit of work any service process takes. A chunk carries a lease (``holder``,
``free_at``: free to take from then on); a taker takes one by compare-and-set, renews its
lease while it works, and stores the chunk's attributions, its cases' states and its ``done``
mark in one write transaction, which completes the job when it finished the last chunk. So a
process that dies loses only its chunks' leases, and a chunk redone after its lease expired
stores nothing twice (a case's state is read under its relationship's lock).

Liveness is judged by Neo4j's clock alone: leases and heartbeats write ``datetime()``, and
takes and reads compare with ``datetime()``, so clocks of different service processes never
meet. How long a silence makes a job interrupted (``stale_s``) is the caller's setting
(``job_stale_s``).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from neo4j import AsyncManagedTransaction, AsyncSession
from neo4j.exceptions import ConstraintError

from cypher import query
from service.attribution.jobs.models import AttributionJob, AttributionJobRequest, JobFailure
from service.attribution.models import AttributionResult
from service.attribution.repository import store
from service.db import store_errors
from service.errors import Conflict
from service.neo4j_values import native

FAILURES_SHOWN = 20


@dataclass(frozen=True)
class Claim:
    """What a resume found: whether it claimed the job (gave it back to the takers), the status
    and last heartbeat the job had (with its age by Neo4j's clock), and its judge settings."""

    claimed: bool
    status: str
    heartbeat_at: datetime | None
    heartbeat_age_s: float | None
    judge: str
    refresh: bool
    max_llm_calls: int | None


@dataclass(frozen=True)
class ChunkKey:
    """One chunk of a job: its project, job and place in the job (``seq``)."""

    project: str
    job_id: str
    seq: int


@dataclass(frozen=True)
class Taken:
    """A chunk a taker took, with its job's judge settings."""

    chunk: ChunkKey
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
    request: AttributionJobRequest,
    stale_s: float,
    chunk: int,
    head_start_ms: int,
) -> AttributionJob:
    """A new running job over the project's failed cases, with its chunks (``chunk`` cases
    each, free to every process ``head_start_ms`` from now); ``Conflict`` when one is
    active."""

    async def work(tx: AsyncManagedTransaction) -> AttributionJob | None:
        await (
            await tx.run(
                query("attribution_jobs/create_job"),
                project=project,
                job_id=job_id,
                judge=request.judge,
                refresh=request.refresh,
                max_llm_calls=request.max_llm_calls,
                chunk=chunk,
                head_start_ms=head_start_ms,
            )
        ).consume()
        return await _read_job(tx, project, job_id, stale_s)

    try:
        job = await session.execute_write(work)
    except ConstraintError as e:
        raise await _conflict(session, project) from e
    assert job is not None  # created in the same transaction
    return job


OVERLAPPED_READ_PAUSES_S = (0.01, 0.05, 0.2)
"""Pauses before reading a job again whose read overlapped its completing commit (``get``)."""


@store_errors
async def get(
    session: AsyncSession, project: str, job_id: str, stale_s: float
) -> AttributionJob | None:
    """The job with its progress, or None.

    Neo4j reads at read committed, and one query may overlap the commit of the write that
    completes a job: it has been seen to return ``completed`` with cases of that write's chunk
    still counted pending (done 17 of 20, all 20 stored). Such a read is made again, so a job
    never shows as completed with fewer cases done than it covers."""
    job = await session.execute_read(_read_job, project, job_id, stale_s)
    for pause in OVERLAPPED_READ_PAUSES_S:
        if job is None or job.status != "completed" or job.done == job.total:
            break
        await asyncio.sleep(pause)
        job = await session.execute_read(_read_job, project, job_id, stale_s)
    return job


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
    session: AsyncSession, project: str, job_id: str, stale_s: float, head_start_ms: int
) -> Claim | None:
    """Give a stopped or interrupted job back to the takers if it is one (its chunks not done
    freed from their holders), in one write transaction that locks the job before reading its
    state, so that of concurrent resumes at most one claims it. None when there is no such
    job; ``Conflict`` when another job of the project is active."""

    async def work(tx: AsyncManagedTransaction) -> Claim | None:
        result = await tx.run(
            query("attribution_jobs/resume_job"),
            project=project,
            job_id=job_id,
            stale_s=stale_s,
            head_start_ms=head_start_ms,
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
async def chunk_job(session: AsyncSession, project: str, job_id: str, chunk: int) -> bool:
    """Give chunks to a job written before jobs had them (its pending cases, ``chunk`` each);
    whether this call made them (False: it had chunks, or there is no such job)."""

    async def work(tx: AsyncManagedTransaction) -> bool:
        result = await tx.run(
            query("attribution_jobs/chunk_job"), project=project, job_id=job_id, chunk=chunk
        )
        return await result.single() is not None

    return await session.execute_write(work)


@store_errors
async def unchunked_jobs(session: AsyncSession) -> list[tuple[str, str]]:
    """(project, id) of the running jobs written before jobs had chunks."""

    async def work(tx: AsyncManagedTransaction) -> list[tuple[str, str]]:
        result = await tx.run(query("attribution_jobs/unchunked_jobs"))
        return [(r["project"], r["id"]) async for r in result]

    return await session.execute_read(work)


@store_errors
async def take_chunk(
    session: AsyncSession,
    holder: str,
    lease_ms: int,
    job: tuple[str, str] | None,
    look: int,
    judges: tuple[str, ...] = ("heuristic",),
) -> Taken | None:
    """Take a free chunk for ``holder`` (a lease of ``lease_ms``) by compare-and-set: of any
    running job whose judge is one of ``judges``, or of ``job`` (project, id), including the
    chunks of its head start. The ``look`` oldest candidates are locked and the first still free
    is taken, so concurrent takers each get one while there are enough. None: nothing free
    among them."""

    async def work(tx: AsyncManagedTransaction) -> Taken | None:
        if job is None:
            result = await tx.run(
                query("attribution_jobs/take_chunk"),
                holder=holder,
                lease_ms=lease_ms,
                look=look,
                judges=list(judges),
            )
        else:
            result = await tx.run(
                query("attribution_jobs/take_job_chunk"),
                project=job[0],
                job_id=job[1],
                holder=holder,
                lease_ms=lease_ms,
                look=look,
            )
        r = await result.single()
        if r is None:
            return None
        return Taken(
            ChunkKey(r["project"], r["job_id"], r["seq"]),
            r["judge"],
            r["refresh"],
            r["max_llm_calls"],
        )

    return await session.execute_write(work)


@store_errors
async def renew(session: AsyncSession, held: dict[ChunkKey, str], lease_ms: int) -> set[ChunkKey]:
    """Renew the leases of ``held`` (chunk: its holder) by ``lease_ms``, and the heartbeats of
    their jobs; the chunks still held (the others were taken over, stopped or done)."""

    async def work(tx: AsyncManagedTransaction) -> set[ChunkKey]:
        rows = [
            {"project": k.project, "job_id": k.job_id, "seq": k.seq, "holder": h}
            for k, h in held.items()
        ]
        result = await tx.run(query("attribution_jobs/renew_chunks"), held=rows, lease_ms=lease_ms)
        return {ChunkKey(r["project"], r["job_id"], r["seq"]) async for r in result}

    return await session.execute_write(work)


@store_errors
async def chunk_cases(session: AsyncSession, chunk: ChunkKey) -> list[PendingCase]:
    """The chunk's pending cases, in id order."""

    async def work(tx: AsyncManagedTransaction) -> list[PendingCase]:
        result = await tx.run(
            query("attribution_jobs/chunk_cases"),
            project=chunk.project,
            job_id=chunk.job_id,
            seq=chunk.seq,
        )
        return [PendingCase(r["case_id"], r["attributed"]) async for r in result]

    return await session.execute_read(work)


@store_errors
async def record_chunk(
    session: AsyncSession, chunk: ChunkKey, holder: str, outcomes: list[CaseOutcome]
) -> str:
    """Store a chunk's attributions, mark its cases done and the chunk done, in one
    transaction; the job's status afterwards (``completed`` when it was the last chunk).

    Only cases still pending are marked and stored (each case's relationship is locked before
    it is read), and a chunk is counted done once (it is locked before ``done`` is read), so a
    chunk finished by two takers (the first one's lease expired) is stored and counted once.
    """

    async def work(tx: AsyncManagedTransaction) -> str:
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
            project=chunk.project,
            job_id=chunk.job_id,
            runner=holder,
            rows=rows,
        )
        mine = {r["case_id"] async for r in claimed}
        results = [o.result for o in outcomes if o.result is not None and o.case_id in mine]
        if results:
            await store(tx, chunk.project, results, job=chunk.job_id)
        # The chunk's and the job's locks last: held from here to the commit, not through the
        # writes above, so renewals and resumes never wait for a chunk's write.
        done = await tx.run(
            query("attribution_jobs/finish_chunk"),
            project=chunk.project,
            job_id=chunk.job_id,
            seq=chunk.seq,
        )
        record = await done.single(strict=True)
        return str(record["status"])

    return await session.execute_write(work)


@store_errors
async def fail(session: AsyncSession, project: str, job_id: str, error: str) -> None:
    """End a running job as failed, with ``error``."""

    async def work(tx: AsyncManagedTransaction) -> None:
        await (
            await tx.run(
                query("attribution_jobs/fail_job"), project=project, job_id=job_id, error=error
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
