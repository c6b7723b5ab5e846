"""Listing sessions and reading one: its turns in order, what each caused, the cases it asked.

Every answer is bounded (the limits below and the page a caller asks for), so its size never
depends on how big a session or a project grew.
"""

from __future__ import annotations

from neo4j import AsyncSession

from service.errors import ReadTimedOut, SessionNotFound
from service.read_budget import Deadline
from service.sessions import repository as sessions
from service.sessions.models import SessionBounds, SessionList, SessionView

OPERATIONS_PER_TURN = 20
OUTPUTS_PER_OPERATION = 10
SESSION_OPERATIONS = 200
SESSION_CASES = 200
VALUE_CHARS = 2000
"""What one session answer carries at most beyond its page of turns (module docstring)."""


async def list_sessions(
    session: AsyncSession,
    project: str,
    after: str | None,
    limit: int,
    budget_s: float,
    counted: int,
) -> SessionList:
    """A page of the project's sessions in id order, after the cursor ``after`` (none: from the
    first), each counted up to ``counted``; ``next_after`` is set when the page is full (a next
    page may hold more).
    ``ReadTimedOut`` (422) saying what narrows it when the reads take over ``budget_s``."""
    deadline = Deadline.starting_now(budget_s)
    try:
        found = await sessions.list_sessions(
            session, deadline, project, after or "", limit, counted
        )
    except ReadTimedOut as e:
        raise ReadTimedOut(
            f"{e.message} while counting a page of {limit} sessions; ask for fewer (limit)",
            details=[{"loc": ["query", "limit"], "msg": "timed out"}],
        ) from e
    full = len(found) == limit
    return SessionList(sessions=found, next_after=found[-1].id if full else None)


def session_bounds(skip: int, limit: int, counted: int) -> SessionBounds:
    """The bounds of one session answer: turns ``skip`` to ``skip + limit``, counts stopping at
    ``counted``, the rest fixed."""
    return SessionBounds(
        skip=skip,
        turns=limit,
        operations_per_turn=OPERATIONS_PER_TURN,
        outputs_per_operation=OUTPUTS_PER_OPERATION,
        operations=SESSION_OPERATIONS,
        cases=SESSION_CASES,
        value_chars=VALUE_CHARS,
        counted=counted,
    )


async def get_session(
    session: AsyncSession, project: str, session_id: str, bounds: SessionBounds, budget_s: float
) -> SessionView:
    """The session within ``bounds``; ``SessionNotFound`` when nothing in the project names it,
    ``ReadTimedOut`` (422) saying what narrows it when the reads take over ``budget_s``."""
    deadline = Deadline.starting_now(budget_s)
    try:
        found = await sessions.read_session(session, deadline, project, session_id, bounds)
    except ReadTimedOut as e:
        raise ReadTimedOut(
            f"{e.message} while reading session {session_id!r}; ask for fewer turns (limit)",
            details=[{"loc": ["query", "limit"], "msg": "timed out"}],
        ) from e
    if found is None:
        raise SessionNotFound(
            f"no session {session_id!r} in project {project!r}: no operation names it as "
            "session_id or conversation_id, and no unit as conversation_id (GET /sessions "
            "lists the project's sessions)",
            details=[{"loc": ["path", "session_id"], "msg": "names no session of the project"}],
        )
    summary, turns, operations, cases = found
    return SessionView(
        project=project,
        id=session_id,
        summary=summary,
        turns=turns,
        turns_skip=bounds.skip,
        turns_limit=bounds.turns,
        operations=operations,
        operations_limit=bounds.operations,
        cases=cases,
        cases_limit=bounds.cases,
        value_chars=bounds.value_chars,
    )


async def case_sessions(session: AsyncSession, project: str, case_id: str) -> list[str]:
    """The ids of the sessions a case was asked in; empty when its trace named none."""
    return await sessions.case_sessions(session, project, case_id)
