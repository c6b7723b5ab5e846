"""``GET /projects``: the projects the caller's key may see, with what each holds."""

from __future__ import annotations

from fastapi import APIRouter

from service.auth import PrincipalDep
from service.dependencies import StoresDep
from service.error_responses import responses
from service.projects import service as projects
from service.projects.models import ProjectSummary

router = APIRouter(tags=["projects"])


@router.get("/projects", response_model=list[ProjectSummary], responses=responses(503))
async def list_projects(stores: StoresDep, principal: PrincipalDep) -> list[ProjectSummary]:
    """Every project holding data, in name order, with its counts of operations, units, cases
    and failed cases and its last activity. An admin key (or no keys configured) sees every
    project; a key bound to projects sees only those. Counting reads every node of the store
    once: an overview, not a per-request call. With several stores (project placement) it
    asks each and lists a project from the store placement puts it on."""
    return await projects.list_projects(stores, principal)
