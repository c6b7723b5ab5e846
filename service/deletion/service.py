"""Deleting data on request (a user's session, a whole project) and by retention (everything
recorded before a time), leaving no orphan nodes behind."""

from __future__ import annotations

from datetime import datetime

from neo4j import AsyncSession

from service.deletion import repository as deletion
from service.deletion.models import DeletionCounts, ProjectDeleted
from service.errors import InvalidInput
from service.times import in_utc


async def delete_session(session: AsyncSession, project: str, session_id: str) -> DeletionCounts:
    return await deletion.delete_session_operations(session, project, session_id)


async def delete_before(session: AsyncSession, project: str, before: datetime) -> DeletionCounts:
    if before.tzinfo is None:
        raise InvalidInput(
            "before needs a time zone (e.g. 2026-01-01T00:00:00Z)",
            details=[{"loc": ["query", "before"], "msg": "no time zone"}],
        )
    utc = in_utc(before, "before")
    assert utc is not None  # before is given
    # Operations first: the cases they answered and the units only they used go with them.
    # What is left and still old is what no operation dates: cases and units sent on their own.
    counts = await deletion.delete_operations_before(session, project, utc)
    counts = counts.plus(await deletion.delete_old_cases(session, project, utc))
    units = await deletion.delete_old_units(session, project, utc)
    return counts.plus(DeletionCounts(units=units))


async def delete_project(session: AsyncSession, project: str, confirm: str) -> ProjectDeleted:
    """Delete every node of ``project``. The project is marked first, in its own transaction:
    from then on it reads as gone and takes no writes (``services.projects``), however far the
    deletion gets. A deletion cut short (a crash, a restart, a 503) is finished by running this
    again; the service does not resume one by itself. Each label goes in bounded transactions
    that seek the project's index of that label; the marker goes last, once nothing is left."""
    if confirm != project:
        raise InvalidInput(
            f"to delete project {project!r} and everything in it, repeat its name in confirm",
            details=[{"loc": ["query", "confirm"], "msg": "must equal the project's name"}],
        )
    await deletion.begin_project_deletion(session, project)
    nodes = 0
    remaining = True
    while remaining:  # again when a write that passed the marker check landed meanwhile
        for step in deletion.PROJECT_STEPS:
            nodes += await deletion.delete_project_step(session, project, step)
        remaining = await deletion.finish_project_deletion(session, project)
    return ProjectDeleted(project=project, nodes=nodes)
