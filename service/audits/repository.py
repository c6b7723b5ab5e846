"""Running an audit's statement for one page of rows, in one read transaction within the
request's time budget (``service.read_budget``).

Audits whose rule ends in Python (a ``keep`` filter) page over candidates: the statement runs
once from ``skip`` with ``scan`` as its limit, and its rows are read as they stream in until
``limit`` rows are kept and one more is found; the next page starts at that candidate. A page
that reads ``scan`` candidates stops there, possibly short, with a ``next_skip`` to go on.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from neo4j import AsyncResult, AsyncSession, AsyncTransaction, Record

from cypher import query
from service.audits.models import AuditRow as Row
from service.audits.models import RowFilter
from service.neo4j_values import native
from service.read_budget import Deadline, read_within


def _row(record: Record) -> Row:
    return {k: native(v) for k, v in record.data().items()}


async def _run(
    tx: AsyncTransaction, statement: str, params: Mapping[str, Any], skip: int, limit: int
) -> AsyncResult:
    return await tx.run(query(statement), {**params, "skip": skip, "limit": limit})


async def _page(
    tx: AsyncTransaction,
    statement: str,
    params: Mapping[str, Any],
    skip: int,
    limit: int,
    keep: RowFilter | None,
    scan: int,
) -> tuple[list[Row], int | None]:
    if keep is None:
        rows = [_row(r) async for r in await _run(tx, statement, params, skip, limit + 1)]
        return rows[:limit], skip + limit if len(rows) > limit else None
    kept: list[Row] = []
    read = 0
    candidates = await _run(tx, statement, params, skip, scan)
    async for record in candidates:
        row = keep(_row(record), params)
        if row is not None:
            if len(kept) == limit:  # one more row exists: the next page starts with it
                await candidates.consume()  # discards the rest without fetching it
                return kept, skip + read
            kept.append(row)
        read += 1
    return kept, skip + read if read == scan else None


async def audit_page(
    session: AsyncSession,
    deadline: Deadline,
    statement: str,
    params: Mapping[str, Any],
    skip: int,
    limit: int,
    keep: RowFilter | None,
    scan: int,
) -> tuple[list[Row], int | None]:
    """Rows of ``statement`` (an ``audits/<name>`` statement; ``params`` hold ``project``) from
    ``skip``, at most ``limit`` of them, and the ``skip`` of the next page (None at the end).
    With ``keep``, at most ``scan`` candidates are read. ``ReadTimedOut`` past ``deadline``."""

    async def work(tx: AsyncTransaction) -> tuple[list[Row], int | None]:
        return await _page(tx, statement, params, skip, limit, keep, scan)

    return await read_within(session, deadline, work)


async def failed_case_answers(
    session: AsyncSession, deadline: Deadline, project: str
) -> dict[str, str]:
    """``{case id: expected answer}`` of the project's failed cases."""

    async def work(tx: AsyncTransaction) -> dict[str, str]:
        result = await tx.run(query("audit_inputs/failed_answers"), project=project)
        return {r["id"]: r["expected_answer"] or "" async for r in result}

    return await read_within(session, deadline, work)
