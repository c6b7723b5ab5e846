"""``GET /projects``: the projects the caller's key may see, with what each holds."""

from __future__ import annotations

from fastapi import APIRouter

from service.auth import PrincipalDep
from service.dependencies import SessionDep
from service.models.projects import ProjectSummary
from service.routes.errors import responses
from service.services import projects

router = APIRouter(tags=["projects"])


@router.get("/projects", response_model=list[ProjectSummary], responses=responses(503))
async def list_projects(session: SessionDep, principal: PrincipalDep) -> list[ProjectSummary]:
    """Every project holding data, in name order, with its counts of operations, units, cases
    and failed cases and its last activity. An admin key (or no keys configured) sees every
    project; a key bound to projects sees only those. Counting reads every node of the store
    once: an overview, not a per-request call."""
    return await projects.list_projects(session, principal)
