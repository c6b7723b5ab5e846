from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

import service.id_paths  # noqa: F401  (registers the {name:id} path convertor)
from service.auth import ProjectDep
from service.dependencies import BoundedReadSessionDep, SettingsDep
from service.error_responses import responses
from service.query_params import Skip, limit_query
from service.sessions import service as sessions
from service.sessions.models import SessionList, SessionView

router = APIRouter(prefix="/sessions", tags=["sessions"])


@router.get("", response_model=SessionList, responses=responses(422, 503))
async def list_sessions(
    session: BoundedReadSessionDep,
    settings: SettingsDep,
    project: ProjectDep,
    after: Annotated[
        str | None,
        Query(
            max_length=1000,
            description="The cursor: only sessions whose id sorts after this "
            "(the previous page's `next_after`).",
        ),
    ] = None,
    limit: Annotated[int, limit_query(200, "At most this many sessions.")] = 50,
) -> SessionList:
    """The project's sessions (conversations) in id order, each with its number of turns,
    operations, cases and failed cases (each up to `MEMTRACE_SESSION_COUNT_CAP`: past it,
    `capped`), and its first and last time. A session is named by an
    operation's `session_id` or by a `conversation_id` attribute; what names none is in no
    session. The reads share the audits' time budget (`MEMTRACE_AUDIT_TIMEOUT_S`): past it, a
    422 saying what to narrow."""
    return await sessions.list_sessions(
        session, project, after, limit, settings.audit_timeout_s, settings.session_count_cap
    )


@router.get("/{session_id:id}", response_model=SessionView, responses=responses(404, 422, 503))
async def get_session(
    session_id: str,
    session: BoundedReadSessionDep,
    settings: SettingsDep,
    project: ProjectDep,
    skip: Skip = 0,
    limit: Annotated[int, limit_query(500, "At most this many turns.")] = 100,
) -> SessionView:
    """One session: its turns in order (each message with its role and text, the operations
    that consumed it and what they produced), its first operations, and the cases it asked with
    their verdicts and stored attributions. 404 when nothing in the project names it; a 422
    saying what to narrow past the audits' time budget (`MEMTRACE_AUDIT_TIMEOUT_S`)."""
    bounds = sessions.session_bounds(skip, limit, settings.session_count_cap)
    return await sessions.get_session(
        session, project, session_id, bounds, settings.audit_timeout_s
    )
