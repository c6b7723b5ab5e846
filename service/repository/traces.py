"""Writing a trace batch: one managed write transaction, all of it or nothing.

The transaction first looks up the fingerprints of every id the batch names, refuses the batch
(409) if any differs, and then creates only what is new with plain ``CREATE`` statements (cheaper
than ``MERGE``). Two batches racing to create the same id are settled by the uniqueness
constraints: the loser's transaction fails and is run again, and then finds the winner's nodes.
"""

from __future__ import annotations

from typing import Any, LiteralString

from neo4j import AsyncManagedTransaction, AsyncSession
from neo4j.exceptions import ConstraintError

from cypher import query
from graph_schema.models import IngestResult, KindCounts
from ingest.rows import BatchRows
from service.db import store_errors
from service.errors import Conflict

_MISSING = object()
_RACE_RETRIES = 3


async def _fingerprints(
    tx: AsyncManagedTransaction, statement: LiteralString, project: str, ids: list[str]
) -> dict[str, str | None]:
    if not ids:
        return {}
    result = await tx.run(statement, project=project, ids=ids)
    return {record["id"]: record["fp"] async for record in result}


async def _run(tx: AsyncManagedTransaction, statement: LiteralString, **params: Any) -> None:
    if any(isinstance(v, list) and not v for v in params.values()):
        return  # nothing to write: save the round trip
    await (await tx.run(statement, **params)).consume()


def _split(
    defined: dict[str, dict[str, Any]], stored: dict[str, str | None]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[str], int]:
    """(rows to create, rows filling in id-only units, ids that differ, count of identical)."""
    new: list[dict[str, Any]] = []
    fill: list[dict[str, Any]] = []
    differing: list[str] = []
    identical = 0
    for node_id, row in defined.items():
        fp = stored.get(node_id, _MISSING)
        if fp is _MISSING:
            new.append(row)
        elif fp is None:  # a unit known only by id so far
            fill.append(row)
        elif fp == row["fp"]:
            identical += 1
        else:
            differing.append(node_id)
    return new, fill, differing, identical


def _raise_conflict(conflicts: dict[str, list[str]]) -> None:
    conflicts = {kind: sorted(ids) for kind, ids in conflicts.items() if ids}
    if conflicts:
        listed = "; ".join(f"{kind}: {', '.join(ids[:20])}" for kind, ids in conflicts.items())
        raise Conflict(
            f"ids already name something different (they are immutable): {listed}",
            details=[
                {"loc": [kind, node_id], "msg": "already names something different"}
                for kind, ids in conflicts.items()
                for node_id in ids
            ],
        )


@store_errors
async def write_batch(session: AsyncSession, rows: BatchRows) -> IngestResult:
    """Write ``rows`` in one transaction; ``Conflict`` (nothing written) on a redefinition."""
    _raise_conflict(rows.conflicts)
    for attempt in range(_RACE_RETRIES):
        try:
            return await session.execute_write(_write_batch, rows)
        except ConstraintError:
            if attempt == _RACE_RETRIES - 1:
                raise
    raise AssertionError("unreachable")


async def write_in(tx: AsyncManagedTransaction, rows: BatchRows) -> IngestResult:
    """``write_batch``'s work inside a caller's transaction, for a caller that writes more in it
    (``Conflict`` when an id names something different; the caller checked ``rows.conflicts``)."""
    return await _write_batch(tx, rows)


async def _write_batch(tx: AsyncManagedTransaction, rows: BatchRows) -> IngestResult:
    p = rows.project
    unit_ids = sorted(rows.unit_refs | rows.units.keys())
    units = await _fingerprints(tx, query("ingest/find_units"), p, unit_ids)
    ops = await _fingerprints(tx, query("ingest/find_operations"), p, list(rows.operations))
    cases = await _fingerprints(tx, query("ingest/find_cases"), p, list(rows.cases))

    new_units, fill_units, bad_units, same_units = _split(rows.units, units)
    new_ops, _, bad_ops, same_ops = _split(rows.operations, ops)
    new_cases, _, bad_cases, same_cases = _split(rows.cases, cases)
    _raise_conflict({"units": bad_units, "operations": bad_ops, "cases": bad_cases})

    refs = [uid for uid in rows.referenced_only() if uid not in units]
    await _run(tx, query("ingest/create_unit_refs"), project=p, ids=refs)
    await _run(tx, query("ingest/create_units"), project=p, rows=new_units)
    await _run(tx, query("ingest/define_units"), project=p, rows=fill_units)
    await _run(tx, query("ingest/create_operations"), project=p, rows=new_ops)
    await _run(tx, query("ingest/create_cases"), project=p, rows=new_cases)
    return IngestResult(
        project=p,
        created=KindCounts(
            units=len(new_units) + len(fill_units), operations=len(new_ops), cases=len(new_cases)
        ),
        existing=KindCounts(units=same_units, operations=same_ops, cases=same_cases),
    )
