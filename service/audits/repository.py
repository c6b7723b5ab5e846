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
from service.audits.cursor import Position
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


async def failed_cases_from(
    session: AsyncSession, deadline: Deadline, project: str, start: str, cases: int
) -> dict[str, str]:
    """``{case id: expected answer}`` of at most ``cases`` failed cases from id ``start`` on,
    in id order (``audit_inputs/failed_answers_from``)."""

    async def work(tx: AsyncTransaction) -> dict[str, str]:
        result = await tx.run(
            query("audit_inputs/failed_answers_from"),
            project=project,
            start=start,
            cases=cases,
        )
        return {r["id"]: r["expected_answer"] or "" async for r in result}

    return await read_within(session, deadline, work)


async def cursor_page(
    session: AsyncSession,
    deadline: Deadline,
    statement: str,
    params: Mapping[str, Any],
    start: Position,
    window: list[str],
    after_window: str | None,
    limit: int,
    keep: RowFilter | None,
    scan: int,
) -> tuple[list[Row], Position | None]:
    """Rows of a cursor-paged ``statement`` over the failed cases ``window`` (ids in order, the
    first at or after ``start.case``), at most ``limit`` of them, and where the next page starts
    (None at the end). ``after_window`` is the first failed case past the window, if any: the
    next page starts there when this one covers the window. At most ``scan`` candidates are
    read. ``ReadTimedOut`` past ``deadline``."""
    skip = start.skip if window and window[0] == start.case else 0

    async def work(tx: AsyncTransaction) -> tuple[list[Row], Position | None]:
        candidates = await tx.run(
            query(statement),
            {
                **params,
                "first_case": window[0],
                "last_case": window[-1],
                "skip": skip,
                "limit": scan,
            },
        )
        kept: list[Row] = []
        case, of_case, read = window[0], skip, 0  # candidates of ``case`` read so far
        async for record in candidates:
            raw = _row(record)
            if raw["case"] != case:
                case, of_case = raw["case"], 0
            row = keep(raw, params) if keep is not None else raw
            if row is not None:
                if len(kept) == limit:  # one more row exists: the next page starts with it
                    await candidates.consume()
                    return kept, Position(case, of_case)
                kept.append(row)
            of_case += 1
            read += 1
        if read == scan:  # stopped at its most candidates: go on after the last one read
            return kept, Position(case, of_case)
        return kept, Position(after_window) if after_window is not None else None

    if not window:
        return [], None
    return await read_within(session, deadline, work)
