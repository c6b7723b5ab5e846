"""Listing the projects a caller may see."""

from __future__ import annotations

from neo4j import AsyncSession

from service.auth import Principal
from service.models.projects import ProjectSummary
from service.repository import projects


async def list_projects(session: AsyncSession, principal: Principal) -> list[ProjectSummary]:
    """Every project with data when keys are off or the key is an admin's (``KEY`` or
    ``KEY:*``); else only the key's projects that hold anything."""
    bound = None if principal.key is None else principal.key.projects
    return await projects.list_projects(session, None if bound is None else sorted(bound))
