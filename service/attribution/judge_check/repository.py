"""Recorded judge checks: one outcome per project and model (``JudgeCheck {project, id}``)."""

from __future__ import annotations

from neo4j import AsyncManagedTransaction, AsyncSession

from cypher import query
from service.attribution.judge_check.models import JudgeCheckResult
from service.db import store_errors


async def _record(tx: AsyncManagedTransaction, project: str, result: JudgeCheckResult) -> None:
    props = {
        "outcome": result.model_dump_json(),
        "accuracy": result.accuracy,
        "probe_set": result.probe_set,
        "checked_at": result.checked_at,
    }
    outcome = await tx.run(
        query("judge_checks/record_check"), project=project, model=result.model, props=props
    )
    await outcome.consume()


@store_errors
async def record(session: AsyncSession, project: str, result: JudgeCheckResult) -> None:
    """Store ``result`` for ``project`` and its model, replacing the one before."""
    await session.execute_write(_record, project, result)


async def _get(tx: AsyncManagedTransaction, project: str, model: str) -> str | None:
    result = await tx.run(query("judge_checks/get_check"), project=project, model=model)
    record = await result.single()
    return str(record["outcome"]) if record else None


@store_errors
async def get(session: AsyncSession, project: str, model: str) -> JudgeCheckResult | None:
    """The recorded check of ``model`` in ``project``, or None."""
    stored = await session.execute_read(_get, project, model)
    return JudgeCheckResult.model_validate_json(stored) if stored is not None else None
