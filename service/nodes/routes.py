from __future__ import annotations

from fastapi import APIRouter

import service.id_paths  # noqa: F401  (registers the {name:id} path convertor)
from service.auth import ProjectDep
from service.dependencies import SessionDep
from service.error_responses import responses
from service.nodes import service as nodes
from service.nodes.models import OperationView, UnitView

router = APIRouter(tags=["cases"])


@router.get("/units/{unit_id:id}", response_model=UnitView, responses=responses(404, 503))
async def get_unit(unit_id: str, session: SessionDep, project: ProjectDep) -> UnitView:
    """A unit: its content, attributes, the operations that produced and consumed it, and the
    cases that name it as answer or evidence."""
    return await nodes.get_unit(session, project, unit_id)


@router.get(
    "/operations/{operation_id:id}", response_model=OperationView, responses=responses(404, 503)
)
async def get_operation(
    operation_id: str, session: SessionDep, project: ProjectDep
) -> OperationView:
    """An operation: its name, kind, system, session, time, attributes, the units it consumed
    and produced, and the cases whose stored attribution blames it."""
    return await nodes.get_operation(session, project, operation_id)
