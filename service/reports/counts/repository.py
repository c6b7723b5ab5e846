"""Kept report counts: what ``GET /report``, the dashboard and ``GET /projects`` count, kept as
the cases change, so reading them costs the same at any project size.

A project's counts are ``(:ReportCount {project, key})`` nodes, one per combination the report
groups by (a case's UTC day, system, verdict, attribution status, error type and blamed
operation, with that operation's name, system and prompt), each with the number of cases in it
and the sums of their attributions' costs. Every case stores what it adds (``report_key``,
``report_sums``). A writer that changes what a case counts (ingest, a verdict, an attribution,
a deletion) calls ``counted_before`` on the cases it may change, then makes its change, then
``count_again``, all in its own write transaction: the case's old contribution is subtracted and
its new one, read from the store with the report's own rules (``reports/rows_of_cases``), is
added. Deriving the new contribution from the stored case, instead of reasoning about what each
writer changed, keeps the writers and ``GET /report?recount=true`` in agreement by
construction; the cases are locked first, so concurrent writers of one case subtract exactly
what the other added, and counts are added under the count node's write lock.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any

from neo4j import AsyncDriver, AsyncManagedTransaction, AsyncSession, AsyncTransaction

from cypher import query
from service.db import BACKFILL_BATCH, register_migration
from service.read_budget import Deadline, read_within
from service.reports.repository import CaseRow, record_to_row

log = logging.getLogger(__name__)

SUMS = ("cases", "llm_calls", "input_tokens", "output_tokens", "seconds", "llm_judged", "on_llm")
"""What a count node sums over its cases, in the order a case stores them (``report_sums``)."""
DIMS = (
    "day",
    "system",
    "verdict",
    "status",
    "error_type",
    "operation_id",
    "operation_name",
    "operation_system",
    "prompt",
)
"""What a count node groups by, in the order its key lists them."""


@dataclass(frozen=True)
class CountRow:
    """Cases that share every dimension a report groups by, and their sums: a kept count node,
    or one case counted as it is now (``of_case``); the report is made from these either way."""

    day: date | None
    system: str | None
    verdict: str
    status: str | None
    error_type: str | None
    operation_id: str | None
    operation_name: str | None
    operation_system: str | None
    prompt: str | None
    cases: int = 1
    llm_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    seconds: float = 0.0
    llm_judged: int = 0
    on_llm: int = 0

    @classmethod
    def of_case(cls, row: CaseRow) -> CountRow:
        cost = row.cost
        return cls(
            day=row.at.astimezone(UTC).date() if row.at is not None else None,
            system=row.system,
            verdict=row.verdict,
            status=row.status,
            error_type=row.error_type,
            operation_id=row.operation_id,
            operation_name=row.operation_name,
            operation_system=row.operation_system,
            prompt=row.prompt,
            cases=1,
            llm_calls=cost.llm_calls if cost else 0,
            input_tokens=cost.input_tokens if cost else 0,
            output_tokens=cost.output_tokens if cost else 0,
            seconds=cost.seconds if cost else 0.0,
            llm_judged=int(row.llm_judged) if cost else 0,
            on_llm=int(row.on_llm) if cost else 0,
        )

    @classmethod
    def of_record(cls, record: Any) -> CountRow:
        """A row of ``reports/kept_counts``."""
        day = record["day"]
        return cls(
            **{d: record[d] for d in DIMS if d != "day"},
            day=date.fromisoformat(day) if day else None,
            **{s: record[s] for s in SUMS},
        )

    def dims(self) -> dict[str, str | None]:
        values = {d: getattr(self, d) for d in DIMS}
        values["day"] = self.day.isoformat() if self.day else None
        return values

    def key(self) -> str:
        return json.dumps([self.dims()[d] for d in DIMS], separators=(",", ":"))

    def sums(self) -> list[float]:
        return [float(getattr(self, s)) for s in SUMS]


Contribution = tuple[str, list[float]]
"""What one case adds to the counts: its count node's key and its sums."""


async def counted_before(
    tx: AsyncManagedTransaction | AsyncTransaction, project: str, ids: list[str] | set[str]
) -> dict[str, Contribution | None]:
    """Lock the cases ``ids`` that exist and read what each adds to the counts now (None for
    one never counted, or not there yet). Run before the writer changes them."""
    ordered = sorted(set(ids))
    if not ordered:
        return {}
    await (await tx.run(query("reports/lock_cases"), project=project, ids=ordered)).consume()
    result = await tx.run(query("reports/counted_cases"), project=project, ids=ordered)
    before: dict[str, Contribution | None] = dict.fromkeys(ordered)
    async for record in result:
        if record["key"] is not None:
            before[record["case_id"]] = (record["key"], list(record["sums"]))
    return before


async def count_again(
    tx: AsyncManagedTransaction | AsyncTransaction,
    project: str,
    before: dict[str, Contribution | None],
) -> None:
    """Count the cases of ``before`` as they are now, after the writer's change: subtract what
    each added, add what it adds now (nothing for a case the writer deleted)."""
    if not before:
        return
    result = await tx.run(query("reports/rows_of_cases"), project=project, ids=sorted(before))
    now = [(record["case_id"], CountRow.of_case(record_to_row(record))) async for record in result]
    deltas: dict[str, tuple[dict[str, str | None], list[float]]] = {}

    def add(key: str, dims: dict[str, str | None], sums: list[float], sign: int) -> None:
        _, total = deltas.setdefault(key, (dims, [0.0] * len(SUMS)))
        for i, value in enumerate(sums):
            total[i] += sign * value

    for old in before.values():
        if old is not None:
            key, sums = old
            add(key, dict(zip(DIMS, json.loads(key), strict=True)), sums, -1)
    marks = []
    for case_id, row in now:
        key, sums = row.key(), row.sums()
        add(key, row.dims(), sums, +1)
        marks.append({"id": case_id, "key": key, "sums": sums})
    changed = [
        _delta(key, dims, sums)
        for key, (dims, sums) in sorted(deltas.items())
        if any(abs(v) > 0 for v in sums)
    ]
    if changed:
        await (await tx.run(query("reports/add_counts"), project=project, deltas=changed)).consume()
    await (await tx.run(query("reports/mark_counted"), project=project, cases=marks)).consume()


def _delta(key: str, dims: dict[str, str | None], sums: list[float]) -> dict[str, Any]:
    values: dict[str, Any] = {"key": key, "dims": dims}
    for name, value in zip(SUMS, sums, strict=True):
        values[name] = value if name == "seconds" else round(value)
    return values


async def kept_rows(
    session: AsyncSession,
    deadline: Deadline,
    project: str,
    system: str | None,
    since: datetime | None,
    until: datetime | None,
) -> list[CountRow]:
    """The project's kept count nodes in the filters (``since``/``until`` at UTC midnights:
    the counts are by day); ``ReadTimedOut`` past ``deadline``."""

    async def work(tx: AsyncTransaction) -> list[CountRow]:
        result = await tx.run(
            query("reports/kept_counts"),
            project=project,
            system=system,
            since_day=_day(since),
            until_day=_day(until),
        )
        return [CountRow.of_record(record) async for record in result]

    return await read_within(session, deadline, work)


def _day(moment: datetime | None) -> str | None:
    return moment.astimezone(UTC).date().isoformat() if moment is not None else None


async def count_uncounted_cases(driver: AsyncDriver, database: str) -> None:
    """Start-up migration: add the cases stored before the kept counts to them (``report_key``
    is null), a project and batch per transaction (``cypher/migrations/uncounted_cases``). Run
    by ``service.db.apply_schema`` after its own migrations (so stale attributions are gone and
    what is counted is what a recount reads); on a store that has none, one label scan."""
    while True:
        records, _, _ = await driver.execute_query(
            query("migrations/uncounted_cases"), batch=BACKFILL_BATCH, database_=database
        )
        if not records:
            return
        async with driver.session(database=database) as session:
            for record in records:
                await session.execute_write(_count_now, record["project"], record["ids"])
        log.info(
            "neo4j store: counted %d cases stored before kept report counts",
            sum(len(r["ids"]) for r in records),
        )


async def _count_now(tx: AsyncManagedTransaction, project: str, ids: list[str]) -> None:
    await count_again(tx, project, await counted_before(tx, project, ids))


register_migration(count_uncounted_cases)
