"""Deleting data: ``DELETE /sessions/{id}``, ``DELETE /data?before=``, ``DELETE /project``."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Query

import service.id_paths  # noqa: F401  (registers the {name:id} path convertor)
from service.auth import ProjectDep
from service.deletion import service as deletion
from service.deletion.models import DeletionCounts, ProjectDeleted
from service.dependencies import DeletingSessionDep, SessionDep
from service.error_responses import responses

router = APIRouter(tags=["deletion"])


@router.delete(
    "/sessions/{session_id:id}", response_model=DeletionCounts, responses=responses(422, 503)
)
async def delete_session(
    session_id: str, session: SessionDep, project: ProjectDep
) -> DeletionCounts:
    """Delete one session's operations (those naming it as ``session_id`` or
    ``conversation_id``, the session ``GET /sessions/{id}`` shows), the cases they answered, and
    the units nothing else refers to afterwards: how to honour a user's deletion request. A
    message naming the conversation that an operation outside it still reads stays with that
    operation. Idempotent."""
    return await deletion.delete_session(session, project, session_id)


@router.delete("/data", response_model=DeletionCounts, responses=responses(422, 503))
async def delete_before(
    session: SessionDep,
    project: ProjectDep,
    before: Annotated[datetime, Query(description="Delete what was recorded before this time.")],
) -> DeletionCounts:
    """Retention: delete the operations recorded before ``before`` (with a time zone), the cases
    they answered, and the units nothing else refers to afterwards. Idempotent."""
    return await deletion.delete_before(session, project, before)


@router.delete("/project", response_model=ProjectDeleted, responses=responses(422, 503))
async def delete_project(
    session: DeletingSessionDep,
    project: ProjectDep,
    confirm: Annotated[str, Query(description="The project's name again, to confirm.")],
) -> ProjectDeleted:
    """Delete the whole project: every unit, operation, case and attribution in it. From its
    start until it has finished the project reads as gone (404), takes no writes (409) and is
    listed by ``GET /projects`` with ``deleting: true``; if it stops half way, run it again."""
    return await deletion.delete_project(session, project, confirm)
