"""Deleting data: a whole project, one session's operations, or everything recorded before a
time (operations, then the cases and units no operation dates). Every statement is in
``cypher/deletion/``; work is done in bounded transactions, so a large deletion neither holds
one huge transaction nor loses what it already did when it stops (running it again finishes the
job: deletion is idempotent).

Racing writers: each unit is deleted only once this transaction holds its write lock and has
seen that nothing refers to it (``cypher/deletion/delete_operations.cypher``), so a batch that
links a unit first keeps it; a transaction whose node another deletion removed first is run
again (``db.write_rerun``)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from neo4j import AsyncManagedTransaction, AsyncSession

from cypher import query
from service.db import store_errors, write_rerun
from service.deletion.models import DeletionCounts
from service.reports.counts import repository as kept

OPERATIONS_PER_TRANSACTION = 2_000
NODES_PER_TRANSACTION = 10_000


async def _operation_ids(
    tx: AsyncManagedTransaction, project: str, statement: str, params: dict[str, Any]
) -> list[str]:
    result = await tx.run(query(statement), project=project, **params)
    return [record["id"] async for record in result]


async def _delete_operations(
    tx: AsyncManagedTransaction, project: str, ids: list[str]
) -> dict[str, int]:
    touched = await tx.run(query("reports/cases_of_operations"), project=project, ids=ids)
    before = await kept.counted_before(tx, project, (await touched.single(strict=True))["ids"])
    result = await tx.run(query("deletion/delete_operations"), project=project, ids=ids)
    record = await result.single()
    assert record is not None  # the statement always returns one row
    counts = dict(record)
    # What the deleted operations read may no longer reach a memory (audit construction_loss).
    consumed = counts.pop("consumed")
    if consumed:
        result = await tx.run(query("deletion/recheck_reach"), project=project, ids=consumed)
        await result.consume()
    await kept.count_again(tx, project, before)
    return counts


async def delete_session_operations(
    session: AsyncSession, project: str, session_id: str
) -> DeletionCounts:
    """Delete one session's operations and what only they explain."""
    return await _delete_selected(
        session, project, "deletion/select_session_operations", {"session_id": session_id}
    )


async def delete_operations_before(
    session: AsyncSession, project: str, before: datetime
) -> DeletionCounts:
    """Delete the operations recorded before ``before`` and what only they explain."""
    return await _delete_selected(
        session, project, "deletion/select_operations_before", {"before": before}
    )


@store_errors
async def _delete_selected(
    session: AsyncSession, project: str, statement: str, params: dict[str, Any]
) -> DeletionCounts:
    """Delete the operations ``statement`` selects, in bounded transactions."""
    ids = await session.execute_read(_operation_ids, project, statement, params)
    total = DeletionCounts()
    for start in range(0, len(ids), OPERATIONS_PER_TRANSACTION):
        chunk = ids[start : start + OPERATIONS_PER_TRANSACTION]
        counts = await write_rerun(session, _delete_operations, project, chunk)
        total = total.plus(DeletionCounts(**counts))
    return total


async def _old_case_ids(tx: AsyncManagedTransaction, project: str, before: datetime) -> list[str]:
    result = await tx.run(query("deletion/select_old_cases"), project=project, before=before)
    return [record["id"] async for record in result]


async def _delete_cases(
    tx: AsyncManagedTransaction, project: str, ids: list[str]
) -> dict[str, int]:
    before = await kept.counted_before(tx, project, ids)
    result = await tx.run(query("deletion/delete_cases"), project=project, ids=ids)
    record = await result.single()
    assert record is not None  # the statement always returns one row
    await kept.count_again(tx, project, before)
    return dict(record)


@store_errors
async def delete_old_cases(session: AsyncSession, project: str, before: datetime) -> DeletionCounts:
    """Delete the cases older than ``before`` that no deleted operation answered, and what only
    they named (see the .cypher files)."""
    ids = await session.execute_read(_old_case_ids, project, before)
    total = DeletionCounts()
    for start in range(0, len(ids), OPERATIONS_PER_TRANSACTION):
        chunk = ids[start : start + OPERATIONS_PER_TRANSACTION]
        counts = await write_rerun(session, _delete_cases, project, chunk)
        total = total.plus(DeletionCounts(**counts))
    return total


async def _delete_old_units_batch(
    tx: AsyncManagedTransaction, project: str, before: datetime
) -> tuple[int, int]:
    result = await tx.run(
        query("deletion/delete_old_units"),
        project=project,
        before=before,
        batch=NODES_PER_TRANSACTION,
    )
    record = await result.single(strict=True)
    return int(record["candidates"]), int(record["deleted"])


@store_errors
async def delete_old_units(session: AsyncSession, project: str, before: datetime) -> int:
    """Delete the units dated before ``before`` that nothing refers to; the number deleted.
    Runs until a batch finds no candidate (one a writer linked meanwhile is kept and not found
    again)."""
    deleted = 0
    while True:
        found, batch = await write_rerun(session, _delete_old_units_batch, project, before)
        deleted += batch
        if not found:
            return deleted


PROJECT_STEPS = (
    "deletion/project/delete_attributions",
    "deletion/project/delete_job_chunks",
    "deletion/project/delete_attribution_jobs",
    "deletion/project/delete_cases",
    "deletion/project/delete_operations",
    "deletion/project/delete_units",
    "deletion/project/delete_judge_checks",
    "deletion/project/delete_optimization_claims",
    "deletion/project/delete_otlp_warnings",
    "deletion/project/delete_otlp_span_logs",
    "deletion/project/delete_report_counts",
)
"""The per-label statements of DELETE /project, one for each label a project's nodes carry but
the deletion marker, each a seek on that label's (project, ...) index."""


async def _begin_project_deletion(tx: AsyncManagedTransaction, project: str) -> None:
    result = await tx.run(query("deletion/project/begin"), project=project)
    await result.consume()


@store_errors
async def begin_project_deletion(session: AsyncSession, project: str) -> None:
    """Mark ``project`` as being deleted, in a transaction of its own (see begin.cypher)."""
    await session.execute_write(_begin_project_deletion, project)


async def _delete_project_batch(tx: AsyncManagedTransaction, project: str, step: str) -> int:
    result = await tx.run(query(step), project=project, batch=NODES_PER_TRANSACTION)
    record = await result.single()
    return int(record["deleted"]) if record else 0


@store_errors
async def delete_project_step(session: AsyncSession, project: str, step: str) -> int:
    """Delete the nodes of one ``PROJECT_STEPS`` label of ``project``, a batch per transaction,
    until none is left; the number deleted."""
    deleted = 0
    while batch := await session.execute_write(_delete_project_batch, project, step):
        deleted += batch
    return deleted


async def _finish_project_deletion(tx: AsyncManagedTransaction, project: str) -> bool:
    result = await tx.run(query("deletion/project/finish"), project=project)
    record = await result.single()
    return bool(record and record["remaining"])


@store_errors
async def finish_project_deletion(session: AsyncSession, project: str) -> bool:
    """Remove the marker if nothing of ``project`` is left; whether something is."""
    return await session.execute_write(_finish_project_deletion, project)
