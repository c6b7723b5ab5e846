"""Writing a trace batch: one managed write transaction, all of it or nothing.

Two paths, the same result:

- Optimistic (tried first): most batches name only new ids, so the transaction creates everything
  with plain ``CREATE`` statements without looking anything up; only the ids the batch references
  without defining are ``MERGE``d. If any id the batch defines is already stored (an identical
  re-send, a redefinition, a unit known so far only by id, or a concurrent batch that got there
  first), the uniqueness constraints make a ``CREATE`` fail with ``ConstraintError``: the
  transaction is rolled back and nothing of it stays.
- Lookup (after a ``ConstraintError``): the transaction looks up the fingerprints of every id the
  batch names, refuses the batch (409) if any differs, and creates only what is new. A batch that
  races another one creating the same ids fails on the constraints again and is run again; it
  then finds the winner's nodes.

Deadlocks between concurrent batches are ``TransientError``s, which ``execute_write`` retries.
"""

from __future__ import annotations

from typing import Any, LiteralString

from neo4j import AsyncManagedTransaction, AsyncSession
from neo4j.exceptions import ConstraintError

from cypher import query
from graph_schema.models import IngestResult, KindCounts
from ingest.rows import BatchRows
from service.db import store_errors
from service.errors import Conflict, StoreUnavailable

_MISSING = object()
_RACE_RETRIES = 5


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
    try:
        return await session.execute_write(_create_all, rows)
    except ConstraintError:
        pass  # some id is already stored: look them up (module docstring)
    for attempt in range(_RACE_RETRIES):
        try:
            return await session.execute_write(_write_looked_up, rows)
        except ConstraintError as e:
            if attempt == _RACE_RETRIES - 1:
                # Other writers kept creating this batch's ids first: a retry will find them.
                raise StoreUnavailable(
                    "concurrent batches kept creating the same ids; retry the batch"
                ) from e
    raise AssertionError("unreachable")


async def _create_all(tx: AsyncManagedTransaction, rows: BatchRows) -> IngestResult:
    """The optimistic path: every id the batch defines is new, or a ``ConstraintError`` says not."""
    p = rows.project
    # Sorted by id, so concurrent batches take the constraint locks of shared ids in one order
    # (fewer deadlocks to retry).
    units = sorted(rows.units.values(), key=_by_id)
    await _run(tx, query("ingest/merge_unit_refs"), project=p, ids=rows.referenced_only())
    await _run(tx, query("ingest/create_units"), project=p, rows=units)
    await _run(
        tx, query("ingest/create_operations"), project=p, rows=list(rows.operations.values())
    )
    await _run(tx, query("ingest/create_cases"), project=p, rows=list(rows.cases.values()))
    return IngestResult(
        project=p,
        created=KindCounts(
            units=len(units), operations=len(rows.operations), cases=len(rows.cases)
        ),
        existing=KindCounts(),
    )


def _by_id(row: dict[str, Any]) -> str:
    return str(row["id"])


async def _write_looked_up(tx: AsyncManagedTransaction, rows: BatchRows) -> IngestResult:
    """The lookup path: compare with what is stored, then create only what is new."""
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
