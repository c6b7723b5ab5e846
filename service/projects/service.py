"""Listing the projects a caller may see, and keeping requests off a project being deleted."""

from __future__ import annotations

from neo4j import AsyncSession

from service.auth import Principal
from service.db import Stores
from service.errors import ProjectBeingDeleted, ProjectGone, ProjectNotFound
from service.projects import repository as projects
from service.projects.models import ProjectSummary


async def list_projects(stores: Stores, principal: Principal) -> list[ProjectSummary]:
    """Every project with data when keys are off or the key is an admin's (``KEY`` or
    ``KEY:*``); else only the key's projects that hold anything."""
    bound = None if principal.key is None else principal.key.projects
    names = None if bound is None else sorted(bound)
    found: list[ProjectSummary] = []
    for store in stores.all():
        async with store.driver.session(database=store.database) as session:
            listed = await projects.list_projects(session, names)
        found += [p for p in listed if stores.for_project(p.project).name == store.name]
    return sorted(found, key=lambda p: p.project)


async def refuse_if_being_deleted(session: AsyncSession, project: str, *, writing: bool) -> None:
    """Raise unless ``project`` is free of an unfinished deletion. ``DELETE /project`` marks the
    project before it deletes anything (cypher/deletion/project/begin.cypher), so a deletion a
    crash cut short leaves a project that reads as gone (``ProjectGone``, 404) and takes no
    writes (``ProjectBeingDeleted``, 409) until ``DELETE /project`` is run to its end."""
    if await projects.being_deleted(session, project):
        raise ProjectBeingDeleted(project) if writing else ProjectGone(project)


async def require_project(session: AsyncSession, project: str) -> None:
    """Raise ``ProjectNotFound`` unless ``project`` holds something: a mistyped name in the
    console is said to be one, not shown as an empty project. (The JSON API answers a project
    with nothing in it with empty lists: a client may read before its first write.)"""
    if not await projects.holds_anything(session, project):
        raise ProjectNotFound(f"no such project {project!r}")
