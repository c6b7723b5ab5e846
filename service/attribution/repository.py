"""Reading what an attribution needs, and storing and listing attribution results."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from neo4j import AsyncManagedTransaction, AsyncSession

from cypher import query
from service.attribution.graph import NodeRead
from service.attribution.models import AttributionResult
from service.attribution.row_cache import RowCache, listed_reads
from service.attribution.rows import node_read
from service.attribution.shared_graph import Region, extend, read_region
from service.cases.models import CaseView
from service.cases.repository import read_case
from service.db import store_errors
from service.reports.counts import repository as kept


@dataclass(frozen=True)
class CaseInputs:
    """What attributing one case reads: the case, its answer's ancestors and what derives from
    its evidence units (when it names any), decoded (``rows``)."""

    case: CaseView | None
    ancestors: list[NodeRead] = field(default_factory=list)
    derived: list[NodeRead] = field(default_factory=list)


async def _case_inputs(
    tx: AsyncManagedTransaction,
    project: str,
    case_id: str,
    limit: int,
    cache: RowCache | None = None,
) -> CaseInputs:
    case = await read_case(tx, project, case_id)
    if case is None or case.answer_unit is None:
        return CaseInputs(case)
    ancestors = await _ancestor_reads(tx, project, case.answer_unit, limit, cache)
    derived = (
        await _descendant_reads(tx, project, case.evidence_units, limit, cache)
        if case.evidence_units
        else []
    )
    return CaseInputs(case, ancestors, derived)


@store_errors
async def case_graph(session: AsyncSession, project: str, case_id: str, limit: int) -> CaseInputs:
    """One case's inputs, in one read transaction."""
    return await session.execute_read(_case_inputs, project, case_id, limit)


@store_errors
async def case_graphs(
    session: AsyncSession,
    project: str,
    case_ids: list[str],
    limit: int,
    cache: RowCache | None = None,
) -> dict[str, CaseInputs]:
    """Many cases' inputs in one read transaction (an attribution job's batch): one
    transaction's overhead for the batch instead of one per case. With ``cache`` (a job's),
    nodes read before are taken from it, not read again (``row_cache``)."""

    async def work(tx: AsyncManagedTransaction) -> dict[str, CaseInputs]:
        return {cid: await _case_inputs(tx, project, cid, limit, cache) for cid in case_ids}

    return await session.execute_read(work)


@dataclass(frozen=True)
class ChunkInputs:
    """What a job's chunk of cases reads: each case's inputs, and the descent of its evidence
    (:mod:`.shared_graph`), which its cases' walks extend and answer from."""

    cases: dict[str, CaseInputs]
    descent: Region


@store_errors
async def chunk_graphs(
    session: AsyncSession, project: str, case_ids: list[str], limit: int, cache: RowCache
) -> ChunkInputs:
    """The inputs of a job's chunk of cases in one read transaction, as :func:`case_graphs`
    reads them, but with one listing of their answers' ancestors and one of their evidence's
    descendants for all of them (:mod:`.shared_graph`); each case's own when the union is over
    ``limit``."""

    async def work(tx: AsyncManagedTransaction) -> ChunkInputs:
        cases = {cid: await read_case(tx, project, cid) for cid in case_ids}
        walked = [c for c in cases.values() if c is not None and c.answer_unit is not None]
        answers = sorted({c.answer_unit for c in walked if c.answer_unit is not None})
        evidence = sorted({u for c in walked for u in c.evidence_units})
        ancestry = await read_region(tx, project, False, answers, limit, cache)
        descent = await read_region(tx, project, True, evidence, limit, cache)
        inputs = {}
        for cid, case in cases.items():
            if case is None or case.answer_unit is None:
                inputs[cid] = CaseInputs(case)
                continue
            ancestors = (
                ancestry.reach([case.answer_unit])
                if ancestry is not None
                else await _ancestor_reads(tx, project, case.answer_unit, limit, cache)
            )
            derived = (
                []
                if not case.evidence_units
                else descent.reach(case.evidence_units)
                if descent is not None
                else await _descendant_reads(tx, project, case.evidence_units, limit, cache)
            )
            inputs[cid] = CaseInputs(case, ancestors, derived)
        return ChunkInputs(inputs, descent if descent is not None else Region(True))

    return await session.execute_read(work)


@store_errors
async def shared_descendants(
    session: AsyncSession,
    project: str,
    unit_ids: list[str],
    limit: int,
    cache: RowCache,
    descent: Region,
) -> list[NodeRead]:
    """What :func:`descendants` answers, from the chunk's ``descent``: the descent of the units
    it lacks is read and added to it first (:mod:`.shared_graph`). Never more than ``limit``
    nodes: past it, the per-case read, bounded as it is."""

    async def work(tx: AsyncManagedTransaction) -> list[NodeRead]:
        lacking = [u for u in unit_ids if u not in descent.units]
        if not lacking or await extend(tx, project, descent, lacking, limit, cache):
            reads = descent.reach(unit_ids)
            if len(reads) <= limit:
                return reads
        return await _descendant_reads(tx, project, unit_ids, limit, cache)

    # cases in flight at once that lack the same units wait for one read of them
    async with descent.growing:
        if descent.holds(unit_ids):
            reads = descent.reach(unit_ids)
            if len(reads) <= limit:
                return reads
        return await session.execute_read(work)


async def _ancestor_reads(
    tx: AsyncManagedTransaction,
    project: str,
    unit_id: str,
    limit: int,
    cache: RowCache | None = None,
) -> list[NodeRead]:
    if cache is not None:
        return await listed_reads(
            tx, project, "attribution/ancestor_ids", cache, unit_ids=[unit_id], limit=limit
        )
    result = await tx.run(
        query("attribution/ancestors"), project=project, unit_id=unit_id, limit=limit
    )
    record = await result.single()
    return [node_read(row) for row in record["nodes"]] if record else []


async def _descendant_reads(
    tx: AsyncManagedTransaction,
    project: str,
    unit_ids: list[str],
    limit: int,
    cache: RowCache | None = None,
) -> list[NodeRead]:
    if cache is not None:
        return await listed_reads(
            tx, project, "attribution/descendant_ids", cache, unit_ids=unit_ids, limit=limit
        )
    result = await tx.run(
        query("attribution/descendants"), project=project, unit_ids=unit_ids, limit=limit
    )
    record = await result.single()
    return [node_read(row) for row in record["nodes"]] if record else []


@store_errors
async def descendants(
    session: AsyncSession,
    project: str,
    unit_ids: list[str],
    limit: int,
    cache: RowCache | None = None,
) -> list[NodeRead]:
    """Everything derived from ``unit_ids`` (at most ``limit`` nodes), decoded; through
    ``cache`` when given (``row_cache``)."""

    return await session.execute_read(_descendant_reads, project, unit_ids, limit, cache)


def _stored_row(result: AttributionResult, job: str | None) -> dict[str, Any]:
    return {
        "case_id": result.case_id,
        "operation_id": result.operation.id if result.operation else None,
        "props": {
            "status": result.status,
            "error_type": result.error_type,
            "confidence": result.confidence,
            "reason": result.reason,
            "judge": result.judge.kind,
            "model": result.judge.model,
            "llm_verdicts": result.judge.llm_verdicts,
            "created_at": result.created_at or datetime.now(UTC),
            "evidence": result.evidence,
            "result": result.model_dump_json(),
            "job": job,
        },
    }


async def store(
    tx: AsyncManagedTransaction,
    project: str,
    results: list[AttributionResult],
    job: str | None = None,
) -> None:
    """Store ``results`` in ``tx``, each replacing every earlier attribution of its case.

    The cases are locked first (sorted, so overlapping batches lock in one order): concurrent
    stores of one case then run one after the other and leave exactly one attribution.
    """
    case_ids = sorted({r.case_id for r in results})
    await (
        await tx.run(query("attributions/lock_cases"), project=project, case_ids=case_ids)
    ).consume()
    before = await kept.counted_before(tx, project, case_ids)
    rows = [_stored_row(r, job) for r in results]
    await (
        await tx.run(query("attributions/replace_attributions"), project=project, rows=rows)
    ).consume()
    await kept.count_again(tx, project, before)


@store_errors
async def save(session: AsyncSession, project: str, result: AttributionResult) -> None:
    """Store ``result`` as the case's one attribution, replacing earlier ones."""
    await session.execute_write(store, project, [result])


@store_errors
async def get(session: AsyncSession, project: str, case_id: str) -> AttributionResult | None:
    """The stored attribution of a case, or None."""

    async def work(tx: AsyncManagedTransaction) -> str | None:
        result = await tx.run(
            query("attributions/get_attribution"), project=project, case_id=case_id
        )
        record = await result.single()
        return record["result"] if record else None

    stored = await session.execute_read(work)
    return AttributionResult.model_validate_json(stored) if stored else None


@store_errors
async def list_results(
    session: AsyncSession, project: str, filters: dict[str, str | None], skip: int, limit: int
) -> list[AttributionResult]:
    """Stored attributions matching ``filters`` (system, error_type, operation_name, status)."""

    async def work(tx: AsyncManagedTransaction) -> list[str]:
        result = await tx.run(
            query("attributions/list_attributions"),
            {"project": project, "skip": skip, "limit": limit, **filters},
        )
        return [r["result"] async for r in result]

    return [AttributionResult.model_validate_json(s) for s in await session.execute_read(work)]
