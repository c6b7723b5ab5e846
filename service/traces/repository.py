"""Writing a trace batch: one managed write transaction, all of it or nothing; a batch too
large for one (``ingest.rows.split_rows``) in parts, one transaction each (``write_batch``).

Two paths, the same result:

- Optimistic (tried first): most batches name only new ids, so the transaction creates everything
  with plain ``CREATE`` statements without looking anything up; only the ids the batch references
  without defining are ``MERGE``d. If any id the batch defines is already stored (an identical
  re-send, a redefinition, a unit known so far only by id, or a concurrent batch that got there
  first), the uniqueness constraints make a ``CREATE`` fail with ``ConstraintError``: the
  transaction is rolled back and nothing of it stays.
- Lookup (after a ``ConstraintError``): the transaction compares the fingerprints of every id the
  batch names with the stored ones (in Cypher, one answer row per kind), refuses the batch (409)
  if any differs, and creates only what is new. A batch that
  races another one creating the same ids fails on the constraints again and is run again; it
  then finds the winner's nodes.

Deadlocks between concurrent batches are ``TransientError``s, which ``execute_write`` retries.

A deletion racing the batch (``DELETE /sessions/{id}``, ``/data``): reads take no lock, so a unit
the writer found may be deleted before the batch links it. Linking it then either finds it gone
(the statements return it as ``lost``) or waits for the deletion and fails with Neo4j's
``EntityNotFound``; both roll the transaction back and the batch is run again on the lookup
path, which reads the store as it now is: the batch is written as if it came after the
deletion (a unit it refers to without defining is stored by id only, as for any id the store
does not hold), whole, never with an edge dropped. The answer's ``warnings`` name the lost
units. Once an edge to a unit is created, the deletion keeps the unit (it re-checks each unit
under its write lock). Raced through every rerun, the batch is answered ``ConcurrentChange``
(503, retryable, naming the lost units).

Both paths keep two marks the audits seek on, in the same transaction, so that a page of an
audit costs its rows instead of a walk over the whole project. The optimistic path settles what it
can from the batch and the stored units it names (``ingest/marks.py``) and asks the store only for
the rest; the lookup path, rarer, marks in Cypher alone:

- ``reaches_memory`` (does a memory descend from the unit?) on the units the batch's new
  operations and memories lead back to (``_mark_reach``; audit ``construction_loss``). Marks only
  turn true while a project grows; a deletion sets them again around what it removed
  (``repository/deletion.py``).
- ``rewrites_memory`` (did the operation write a next version of a memory that does not hold the
  old one verbatim?) on the batch's new operations and on those reading or writing a unit the
  batch defined after they named it (``_mark_rewrites``; audit ``degraded_updates``).

Units stored before a mark existed get it at start-up (``db.apply_schema``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any, LiteralString

from neo4j import AsyncManagedTransaction, AsyncSession
from neo4j.exceptions import ClientError, ConstraintError

from cypher import query
from ingest.marks import reach_in_batch, rewrites_in_batch
from ingest.rows import BatchRows, split_rows
from service.db import RACE_RERUNS, store_errors, vanished
from service.errors import ConcurrentChange, Conflict
from service.reports.counts import repository as kept
from service.traces.models import IngestResult, KindCounts

LOST_UNITS = (
    "units deleted by a concurrent deletion while this batch was written, which it now refers "
    "to by id only (audit dangling_units): {}"
)
"""The warning of a batch written again after a deletion removed units it refers to."""


class UnitsLost(ConcurrentChange):
    """Units a batch names were deleted by a concurrent transaction after the writer found them:
    the transaction is rolled back (``write_batch`` runs it again; a caller of ``write_in``
    answers 503, retryable)."""

    def __init__(self, ids: list[str]) -> None:
        super().__init__(
            f"a concurrent deletion removed units this batch refers to: {', '.join(ids[:20])}; "
            "send it again",
            details=[{"loc": ["units", uid], "msg": "deleted concurrently"} for uid in ids],
        )
        self.ids = ids


@dataclass(frozen=True)
class _Comparison:
    """How the ids of one kind in a batch stand against the stored ones."""

    missing: list[str]
    undefined: list[str]  # units the batch defines that are stored by id only
    differing: list[str]
    identical: int


_NOTHING = _Comparison([], [], [], 0)


async def _compare(
    tx: AsyncManagedTransaction, statement: LiteralString, project: str, rows: list[dict[str, Any]]
) -> _Comparison:
    if not rows:
        return _NOTHING
    record = await (await tx.run(statement, project=project, rows=rows)).single(strict=True)
    return _Comparison(
        record["missing"], record.get("undefined", []), record["differing"], record["identical"]
    )


async def _run(tx: AsyncManagedTransaction, statement: LiteralString, **params: Any) -> None:
    if any(isinstance(v, list) and not v for v in params.values()):
        return  # nothing to write: save the round trip
    await (await tx.run(statement, **params)).consume()


async def _link(tx: AsyncManagedTransaction, statement: LiteralString, **params: Any) -> None:
    """Run a statement that links (or defines) units the writer found or created, and returns
    those it no longer finds (``lost``); ``UnitsLost`` when there are any."""
    if any(isinstance(v, list) and not v for v in params.values()):
        return
    record = await (await tx.run(statement, **params)).single(strict=True)
    if record["lost"]:
        raise UnitsLost(sorted(record["lost"]))


def _id_and_fp(rows: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"id": node_id, "fp": row["fp"]} for node_id, row in rows.items()]


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


async def _attempt(
    session: AsyncSession,
    write: Callable[[AsyncManagedTransaction, BatchRows], Awaitable[IngestResult]],
    rows: BatchRows,
    lost: set[str],
) -> IngestResult | None:
    """One transaction of ``write``; None when a concurrent writer raced it (run it again),
    adding the units a deletion removed under it to ``lost``."""
    try:
        return await session.execute_write(write, rows)
    except UnitsLost as e:
        lost.update(e.ids)
    except ConstraintError:
        pass  # an id the batch defines is stored, or another batch created it first
    except ClientError as e:
        if not vanished(e):
            raise
    return None


@store_errors
async def write_batch(session: AsyncSession, rows: BatchRows, max_weight: int) -> IngestResult:
    """Write ``rows``; ``Conflict`` (nothing written) on a redefinition.

    In one transaction when it weighs at most ``max_weight`` (``ingest.rows.split_rows``), else
    in parts of at most that, one transaction each, in order: one transaction for all of a large
    batch would need more memory than Neo4j lets one use. The batch's ids are first compared
    with the stored ones in one read transaction, so a redefinition is a 409 with nothing written
    (unless a concurrent writer stores a conflicting id between the check and the part that names
    it). A failure after some parts were written (Neo4j lost, a 503) leaves those parts: each is
    a batch of its own, whole, whose units all exist; sending the same batch again finds them
    identical and writes the rest, so a retry ends with the graph one transaction would have
    written."""
    _raise_conflict(rows.conflicts)
    parts = split_rows(rows, max_weight)
    if len(parts) == 1:
        return await _write_whole(session, rows)
    await session.execute_read(_check_stored, rows)
    results = [await _write_whole(session, part) for part in parts]
    return IngestResult(
        project=rows.project,
        created=_sum(r.created for r in results),
        existing=_sum(r.existing for r in results),
        warnings=[w for r in results for w in r.warnings],
    )


def _sum(counts: Iterable[KindCounts]) -> KindCounts:
    total = KindCounts()
    for c in counts:
        total = KindCounts(
            units=total.units + c.units,
            operations=total.operations + c.operations,
            cases=total.cases + c.cases,
        )
    return total


async def _check_stored(tx: AsyncManagedTransaction, rows: BatchRows) -> None:
    """``Conflict`` when an id of ``rows`` is stored with another definition."""
    _raise_conflict(
        {
            kind: (await _compare(tx, statement, rows.project, _id_and_fp(defined))).differing
            for kind, statement, defined in (
                ("units", query("ingest/compare_units"), rows.units),
                ("operations", query("ingest/compare_operations"), rows.operations),
                ("cases", query("ingest/compare_cases"), rows.cases),
            )
        }
    )


async def _write_whole(session: AsyncSession, rows: BatchRows) -> IngestResult:
    """Write ``rows`` in one transaction: optimistic first, then the lookup path while
    concurrent writers race it (module docstring)."""
    lost: set[str] = set()
    result = await _attempt(session, _create_all, rows, lost)
    reruns = 0
    while result is None and reruns < RACE_RERUNS:
        result = await _attempt(session, _write_looked_up, rows, lost)
        reruns += 1
    if result is None:  # other writers kept creating its ids first, or deleting its units
        if lost:
            raise UnitsLost(sorted(lost))
        raise ConcurrentChange("concurrent batches kept creating the same ids; send it again")
    lost_refs = sorted(lost - rows.units.keys())  # those it defines are stored anew, whole
    if not lost_refs:
        return result
    warning = LOST_UNITS.format(", ".join(lost_refs))
    return result.model_copy(update={"warnings": [*result.warnings, warning]})


async def write_in(tx: AsyncManagedTransaction, rows: BatchRows) -> IngestResult:
    """``write_batch``'s work inside a caller's transaction, for a caller that writes more in it.
    Always the lookup path: an optimistic ``CREATE`` that hit a constraint would abort the
    caller's whole transaction. ``Conflict`` when an id names something different."""
    _raise_conflict(rows.conflicts)
    return await _write_looked_up(tx, rows)


async def _create_all(tx: AsyncManagedTransaction, rows: BatchRows) -> IngestResult:
    """The optimistic path: every id the batch defines is new, or a ``ConstraintError`` says not."""
    p = rows.project
    # The marks the batch settles itself, with the units it names (ingest/marks.py); the store
    # is asked about the rest after the batch is written.
    stored = await _merge_unit_refs(tx, p, rows.referenced_only())
    known = {**stored, **rows.units}
    operations = [
        {**op, "rewrites_memory": rewrites_in_batch(op, known)} for op in rows.operations.values()
    ]
    reached, ask = reach_in_batch(rows.units, stored, operations)
    # Sorted by id, so concurrent batches take the constraint locks of shared ids in one order
    # (fewer deadlocks to retry).
    units = sorted(
        ({**row, "reaches_memory": row["id"] in reached} for row in rows.units.values()),
        key=_by_id,
    )
    # A stored case can be answered only by a unit stored before the batch: here the ids the
    # batch names without defining (every unit it defines is new on this path).
    counted = await _counted_before(tx, p, _answers(operations, [], stored), list(rows.cases))
    await _run(tx, query("ingest/create_units"), project=p, rows=units)
    await _link(tx, query("ingest/create_operations"), project=p, rows=operations)
    await _link(tx, query("ingest/create_cases"), project=p, rows=list(rows.cases.values()))
    await kept.count_again(tx, p, counted)
    await mark_reach_from(tx, p, ask)
    undecided = [op["id"] for op in operations if op["rewrites_memory"] is None]
    await _mark_rewrites(tx, p, undecided, [])
    return IngestResult(
        project=p,
        created=KindCounts(
            units=len(units), operations=len(rows.operations), cases=len(rows.cases)
        ),
        existing=KindCounts(),
    )


async def _mark_reach(
    tx: AsyncManagedTransaction,
    project: str,
    operations: list[dict[str, Any]],
    units: list[dict[str, Any]],
) -> None:
    """Mark what the batch's new ``operations`` and new or newly defined ``units`` made reach a
    memory: start from the operations' outputs and the memories, step back one operation per
    round trip until no unit changes (see ``cypher/ingest/mark_reach.cypher``)."""
    start = {edge["unit"] for op in operations for edge in op["outputs"]}
    start.update(row["id"] for row in units if row["kind"] == "memory")
    await mark_reach_from(tx, project, sorted(start))


async def mark_reach_from(tx: AsyncManagedTransaction, project: str, ids: list[str]) -> None:
    """Step back from the units ``ids`` that reach a memory, one operation per round trip; for
    a writer that adds inputs to stored operations (``service.otlp.span_logs_repository``)."""
    frontier = ids
    while frontier:
        result = await tx.run(query("ingest/mark_reach"), project=project, ids=frontier)
        record = await result.single(strict=True)
        frontier = sorted(record["marked"])


_UNIT_FIELDS = ("id", "kind", "memory_id", "content", "reaches_memory")


async def _merge_unit_refs(
    tx: AsyncManagedTransaction, project: str, ids: list[str]
) -> dict[str, dict[str, Any]]:
    """Store the ids the batch names without defining them (new ones by id only) and return
    each as stored, by id (``cypher/ingest/merge_unit_refs.cypher``)."""
    if not ids:
        return {}
    result = await tx.run(query("ingest/merge_unit_refs"), project=project, ids=ids)
    record = await result.single(strict=True)
    return {unit[0]: dict(zip(_UNIT_FIELDS, unit, strict=True)) for unit in record["units"]}


async def _mark_rewrites(
    tx: AsyncManagedTransaction, project: str, operations: list[str], defined: list[str]
) -> None:
    """Set ``rewrites_memory`` on the ``operations`` and on those reading or writing a unit of
    ``defined`` (``cypher/ingest/mark_rewrites.cypher``)."""
    if operations or defined:
        result = await tx.run(
            query("ingest/mark_rewrites"), project=project, ops=operations, units=defined
        )
        await result.consume()


def _by_id(row: dict[str, Any]) -> str:
    return str(row["id"])


async def _write_looked_up(tx: AsyncManagedTransaction, rows: BatchRows) -> IngestResult:
    """The lookup path: compare with what is stored, then create only what is new."""
    p = rows.project
    unit_rows = [
        {"id": uid, "fp": rows.units[uid]["fp"] if uid in rows.units else None}
        for uid in sorted(rows.unit_refs | rows.units.keys())
    ]
    units = await _compare(tx, query("ingest/compare_units"), p, unit_rows)
    ops = await _compare(tx, query("ingest/compare_operations"), p, _id_and_fp(rows.operations))
    cases = await _compare(tx, query("ingest/compare_cases"), p, _id_and_fp(rows.cases))
    _raise_conflict(
        {"units": units.differing, "operations": ops.differing, "cases": cases.differing}
    )

    new_units = [rows.units[uid] for uid in units.missing if uid in rows.units]
    fill_units = [rows.units[uid] for uid in units.undefined]
    refs = [uid for uid in units.missing if uid not in rows.units]
    new_ops = [rows.operations[oid] for oid in ops.missing]
    new_cases = [rows.cases[cid] for cid in cases.missing]
    stored = set(rows.unit_refs | rows.units.keys()).difference(units.missing)
    answers = _answers(new_ops, [row["id"] for row in fill_units], stored)
    counted = await _counted_before(tx, p, answers, [row["id"] for row in new_cases])
    await _run(tx, query("ingest/create_unit_refs"), project=p, ids=refs)
    await _run(tx, query("ingest/create_units"), project=p, rows=new_units)
    await _link(tx, query("ingest/define_units"), project=p, rows=fill_units)
    await _link(tx, query("ingest/create_operations"), project=p, rows=new_ops)
    await _link(tx, query("ingest/create_cases"), project=p, rows=new_cases)
    await kept.count_again(tx, p, counted)
    await _mark_reach(tx, p, new_ops, new_units + fill_units)
    await _mark_rewrites(tx, p, ops.missing, units.undefined)
    return IngestResult(
        project=p,
        created=KindCounts(
            units=len(new_units) + len(fill_units), operations=len(new_ops), cases=len(new_cases)
        ),
        existing=KindCounts(units=units.identical, operations=ops.identical, cases=cases.identical),
    )


def _answers(
    operations: list[dict[str, Any]], defined: Iterable[str], stored: Iterable[str]
) -> list[str]:
    """The units whose cases' report rows the batch can change: those one of its new
    ``operations`` produces (the case's system) or it ``defined`` (the case's time), among those
    ``stored`` before it (a unit the batch creates answers no stored case)."""
    changed = {edge["unit"] for op in operations for edge in op["outputs"]} | set(defined)
    return sorted(changed.intersection(stored))


async def _counted_before(
    tx: AsyncManagedTransaction, project: str, answers: list[str], cases: list[str]
) -> dict[str, kept.Contribution | None]:
    """The batch's new ``cases`` and the stored cases answered by a unit of ``answers``
    (``_answers``), locked with what they count now (``service.reports.counts.repository``)."""
    stored: list[str] = []
    if answers:
        result = await tx.run(query("reports/cases_answering"), project=project, ids=answers)
        stored = (await result.single(strict=True))["ids"]
    return await kept.counted_before(tx, project, [*cases, *stored])


@store_errors
async def defined_unit_ids(session: AsyncSession, project: str, ids: list[str]) -> set[str]:
    """Those of ``ids`` the project holds as defined units (``ingest/defined_unit_ids``)."""

    async def work(tx: AsyncManagedTransaction) -> set[str]:
        result = await tx.run(query("ingest/defined_unit_ids"), project=project, ids=ids)
        record = await result.single(strict=True)
        return set(record["defined"])

    return await session.execute_read(work)
