"""Writing a trace batch: one managed write transaction, all of it or nothing."""

from __future__ import annotations

from typing import Any, LiteralString

from neo4j import AsyncManagedTransaction, AsyncSession

from cypher import query
from graph_schema.models import IngestResult, KindCounts
from ingest.rows import BatchRows
from service.db import store_errors
from service.errors import Conflict

_MISSING = object()


async def _fingerprints(
    tx: AsyncManagedTransaction, statement: LiteralString, project: str, ids: list[str]
) -> dict[str, str | None]:
    if not ids:
        return {}
    result = await tx.run(statement, project=project, ids=ids)
    return {record["id"]: record["fp"] async for record in result}


async def _run_returning_conflicts(
    tx: AsyncManagedTransaction, statement: LiteralString, project: str, rows: list[dict[str, Any]]
) -> list[str]:
    if not rows:
        return []
    result = await tx.run(statement, project=project, rows=rows)
    return [record["conflict"] async for record in result]


async def _run(tx: AsyncManagedTransaction, statement: LiteralString, **params: Any) -> None:
    if any(isinstance(v, list) and not v for v in params.values()):
        return
    await (await tx.run(statement, **params)).consume()


def _split(
    defined: dict[str, dict[str, Any]], stored: dict[str, str | None]
) -> tuple[list[dict[str, Any]], list[str], int]:
    """(rows to write, ids that differ from what is stored, count of identical ones)."""
    new: list[dict[str, Any]] = []
    differing: list[str] = []
    identical = 0
    for node_id, row in defined.items():
        fp = stored.get(node_id, _MISSING)
        if fp is _MISSING or fp is None:  # absent, or a unit known only by id so far
            new.append(row)
        elif fp == row["fp"]:
            identical += 1
        else:
            differing.append(node_id)
    return new, differing, identical


def _raise_conflict(conflicts: dict[str, list[str]]) -> None:
    conflicts = {kind: sorted(ids) for kind, ids in conflicts.items() if ids}
    if conflicts:
        listed = "; ".join(f"{kind}: {', '.join(ids[:20])}" for kind, ids in conflicts.items())
        raise Conflict(
            f"ids already name something different (they are immutable): {listed}",
            details=conflicts,
        )


@store_errors
async def write_batch(session: AsyncSession, rows: BatchRows) -> IngestResult:
    """Write ``rows`` in one transaction; ``Conflict`` (nothing written) on a redefinition."""
    _raise_conflict(rows.conflicts)
    return await session.execute_write(_write_batch, rows)


async def _write_batch(tx: AsyncManagedTransaction, rows: BatchRows) -> IngestResult:
    p = rows.project
    units = await _fingerprints(
        tx, query("ingest/find_units"), p, sorted(rows.unit_refs | rows.units.keys())
    )
    ops = await _fingerprints(tx, query("ingest/find_operations"), p, list(rows.operations))
    cases = await _fingerprints(tx, query("ingest/find_cases"), p, list(rows.cases))

    new_units, bad_units, same_units = _split(rows.units, units)
    new_ops, bad_ops, same_ops = _split(rows.operations, ops)
    new_cases, bad_cases, same_cases = _split(rows.cases, cases)
    _raise_conflict({"units": bad_units, "operations": bad_ops, "cases": bad_cases})

    refs = [uid for uid in rows.referenced_only() if uid not in units]
    await _run(tx, query("ingest/merge_unit_refs"), project=p, ids=refs)
    raced = {
        "units": await _run_returning_conflicts(tx, query("ingest/merge_units"), p, new_units),
        "operations": await _run_returning_conflicts(
            tx, query("ingest/merge_operations"), p, new_ops
        ),
        "cases": await _run_returning_conflicts(tx, query("ingest/merge_cases"), p, new_cases),
    }
    _raise_conflict(raced)  # rolls the transaction back

    new_op_ids = {row["id"] for row in new_ops}
    new_case_ids = {row["id"] for row in new_cases}
    await _run(
        tx,
        query("ingest/merge_consumes"),
        project=p,
        rows=[e for e in rows.consumes if e["op"] in new_op_ids],
    )
    await _run(
        tx,
        query("ingest/merge_produces"),
        project=p,
        rows=[e for e in rows.produces if e["op"] in new_op_ids],
    )
    await _run(
        tx,
        query("ingest/merge_case_answers"),
        project=p,
        rows=[e for e in rows.case_answers if e["case"] in new_case_ids],
    )
    await _run(
        tx,
        query("ingest/merge_case_evidence"),
        project=p,
        rows=[e for e in rows.case_evidence if e["case"] in new_case_ids],
    )

    return IngestResult(
        project=p,
        created=KindCounts(units=len(new_units), operations=len(new_ops), cases=len(new_cases)),
        existing=KindCounts(units=same_units, operations=same_ops, cases=same_cases),
    )
