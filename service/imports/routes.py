from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Query

from service.auth import ProjectDep
from service.dependencies import SessionDep, SettingsDep
from service.error_responses import responses
from service.imports.models import ImportResult
from service.imports.service import import_execution_graph

router = APIRouter(tags=["ingestion"])


@router.post(
    "/import/execution-graph",
    response_model=ImportResult,
    responses=responses(400, 409, 413, 422, 503),
)
async def post_execution_graph(
    graph: Annotated[dict[str, Any], Body(description="One execution-graph JSON object.")],
    session: SessionDep,
    settings: SettingsDep,
    project: ProjectDep,
    id_prefix: Annotated[
        str | None, Query(max_length=64, description="Prefix for every id (graph ids collide).")
    ] = None,
) -> ImportResult:
    """Import one execution graph of the MemTrace paper's format (MemTraceBench).

    Variables become units, operations operations, their edges CONSUMES/PRODUCES, annotations
    cases (their labels kept in the case attribute ``ground_truth``).
    """
    return await import_execution_graph(session, graph, project, id_prefix, settings)
