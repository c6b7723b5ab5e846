"""Reading sessions: the only code of this feature that runs Cypher (``cypher/sessions``).

A session's size is the data's (a conversation of thousands of turns, a session id stamped on
every operation of a deployment), so the API's reads run under a time budget as the audits' do
(``service.read_budget``: an explicit read transaction, stopped by Neo4j when it is spent). The
case page's one look-up of a case's sessions is a seek on the case's key and runs as usual."""

from __future__ import annotations

import json
from typing import Any

from neo4j import AsyncManagedTransaction, AsyncSession, AsyncTransaction

from cypher import query
from service.db import store_errors
from service.neo4j_values import from_epoch
from service.read_budget import Deadline, read_within
from service.sessions.models import (
    SessionBounds,
    SessionCase,
    SessionOperation,
    SessionSummary,
    Turn,
    TurnOperation,
    TurnOutput,
)


def _role(attributes: str | None) -> str | None:
    """The ``role`` attribute of a message (stored in its attributes' JSON), if it is text."""
    if not attributes:
        return None
    parsed = json.loads(attributes)
    role = parsed.get("role") if isinstance(parsed, dict) else None
    return role if isinstance(role, str) else None


def _summary(row: dict[str, Any]) -> SessionSummary:
    return SessionSummary(
        id=row["id"],
        turns=row["turns"],
        operations=row["operations"],
        cases=row["cases"],
        failed_cases=row["failed_cases"],
        capped=row["capped"],
        first_at=from_epoch(row["first_at"]),
        last_at=from_epoch(row["last_at"]),
    )


def _operation(row: dict[str, Any]) -> TurnOperation:
    return TurnOperation(
        id=row["id"],
        name=row["name"],
        kind=row["kind"],
        system=row["system"],
        session_id=row["session_id"],
        ts=from_epoch(row["ts"]),
        outputs=[TurnOutput(**out) for out in row["outputs"]],
        output_count=row["output_count"],
    )


def _turn(index: int, row: dict[str, Any]) -> Turn:
    return Turn(
        index=index,
        id=row["id"],
        role=_role(row["attributes"]),
        content=row["content"],
        content_chars=row["content_chars"],
        at=from_epoch(row["at"]),
        operations=[_operation(op) for op in row["operations"]],
        operation_count=row["operation_count"],
    )


async def _summaries(
    tx: AsyncTransaction, project: str, ids: list[str], cap: int
) -> list[SessionSummary]:
    result = await tx.run(query("sessions/session_summaries"), project=project, ids=ids, cap=cap)
    return [_summary(record.data()) async for record in result]


async def list_sessions(
    session: AsyncSession, deadline: Deadline, project: str, after: str, limit: int, cap: int
) -> list[SessionSummary]:
    """At most ``limit`` sessions of the project whose ids sort after ``after``, in id order,
    each counted up to ``cap`` (``cypher/sessions/session_summaries``); ``ReadTimedOut`` past
    ``deadline``."""

    async def work(tx: AsyncTransaction) -> list[SessionSummary]:
        result = await tx.run(
            query("sessions/list_sessions"), project=project, after=after, limit=limit
        )
        record = await result.single()
        ids = list(record["ids"]) if record else []
        return await _summaries(tx, project, ids, cap) if ids else []

    return await read_within(session, deadline, work)


async def _turns(
    tx: AsyncTransaction, project: str, session_id: str, bounds: SessionBounds
) -> list[Turn]:
    result = await tx.run(
        query("sessions/session_turns"),
        project=project,
        session_id=session_id,
        skip=bounds.skip,
        limit=bounds.turns,
        operation_limit=bounds.operations_per_turn,
        output_limit=bounds.outputs_per_operation,
        value_chars=bounds.value_chars,
    )
    rows = [record.data() async for record in result]
    return [_turn(bounds.skip + i, row) for i, row in enumerate(rows)]


async def _operations(
    tx: AsyncTransaction, project: str, session_id: str, limit: int
) -> list[SessionOperation]:
    result = await tx.run(
        query("sessions/session_operations"), project=project, session_id=session_id, limit=limit
    )
    return [
        SessionOperation(**{**row, "ts": from_epoch(row["ts"])})
        async for row in (record.data() async for record in result)
    ]


async def _cases(
    tx: AsyncTransaction, project: str, session_id: str, bounds: SessionBounds
) -> list[SessionCase]:
    result = await tx.run(
        query("sessions/session_cases"),
        project=project,
        session_id=session_id,
        limit=bounds.cases,
        value_chars=bounds.value_chars,
    )
    return [
        SessionCase(**{**row, "answered_at": from_epoch(row["answered_at"])})
        async for row in (record.data() async for record in result)
    ]


SessionParts = tuple[SessionSummary, list[Turn], list[SessionOperation], list[SessionCase]]


async def read_session(
    session: AsyncSession, deadline: Deadline, project: str, session_id: str, bounds: SessionBounds
) -> SessionParts | None:
    """The session's counts, a page of its turns, its first operations and its cases, read in
    one transaction so they agree; None when nothing in the project names the session;
    ``ReadTimedOut`` past ``deadline``."""

    async def work(tx: AsyncTransaction) -> SessionParts | None:
        found = await _summaries(tx, project, [session_id], bounds.counted)
        if not found:
            return None
        return (
            found[0],
            await _turns(tx, project, session_id, bounds),
            await _operations(tx, project, session_id, bounds.operations),
            await _cases(tx, project, session_id, bounds),
        )

    return await read_within(session, deadline, work)


@store_errors
async def case_sessions(session: AsyncSession, project: str, case_id: str) -> list[str]:
    """The ids of the sessions the case was asked in (``cypher/sessions/case_sessions``)."""

    async def work(tx: AsyncManagedTransaction) -> list[str]:
        result = await tx.run(query("sessions/case_sessions"), project=project, case_id=case_id)
        record = await result.single()
        return sorted(record["ids"]) if record else []

    return await session.execute_read(work)
