from __future__ import annotations

from fastapi import APIRouter

from graph_schema.views import CaseView, Subgraph
from service.dependencies import ProjectDep, SessionDep, SettingsDep
from service.routes.errors import responses
from service.services import cases

router = APIRouter(prefix="/cases", tags=["cases"])


@router.get("/{case_id}", response_model=CaseView, responses=responses(404, 503))
async def get_case(case_id: str, session: SessionDep, project: ProjectDep = "default") -> CaseView:
    """A stored case with its answer unit and evidence unit ids."""
    return await cases.get_case(session, project, case_id)


@router.get("/{case_id}/subgraph", response_model=Subgraph, responses=responses(404, 422, 503))
async def get_case_subgraph(
    case_id: str, session: SessionDep, settings: SettingsDep, project: ProjectDep = "default"
) -> Subgraph:
    """Every unit and operation the case's answer depends on, with the edges among them."""
    return await cases.case_subgraph(session, project, case_id, settings.subgraph_node_limit)
