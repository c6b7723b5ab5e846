"""Listing the projects a caller may see."""

from __future__ import annotations

from service.auth import Principal
from service.db import Stores
from service.models.projects import ProjectSummary
from service.repository import projects


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
