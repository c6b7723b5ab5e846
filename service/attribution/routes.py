from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Body, Query

import service.id_paths  # noqa: F401  (registers the {name:id} path convertor)
from service.attribution import service as attribution
from service.attribution.models import (
    AttributeRequest,
    AttributionResult,
    ErrorType,
    JudgeKind,
    Status,
)
from service.auth import ProjectDep
from service.dependencies import SessionDep, SettingsDep
from service.error_responses import responses
from service.query_params import Skip, limit_query

router = APIRouter(tags=["attribution"])


@router.post(
    "/attribute/{case_id:id}",
    response_model=AttributionResult,
    responses=responses(400, 404, 422, 503),
)
async def post_attribute(
    case_id: str,
    session: SessionDep,
    settings: SettingsDep,
    project: ProjectDep,
    request: Annotated[AttributeRequest | None, Body()] = None,
    judge: Annotated[
        JudgeKind | None,
        Query(description="The judge, as the body's `judge` (both given: they must agree)."),
    ] = None,
    refresh: Annotated[
        bool | None, Query(description="Attribute again even if stored (as the body's).")
    ] = None,
) -> AttributionResult:
    """Name the operation that broke the case's answer, its error type and why.

    The result is stored with the case and returned again on the next call unless ``refresh``,
    or unless the request names a judge (``judge``, in the body or the query) other than the
    one that made it: then the asked judge attributes the case again. A judge that needs an LLM
    while none is configured is a 422 saying which settings to set.
    """
    asked = attribution.attribute_request(request, judge, refresh, settings)
    return await attribution.attribute_case(session, project, case_id, asked, settings)


@router.get(
    "/cases/{case_id:id}/attribution",
    response_model=AttributionResult,
    responses=responses(404, 503),
)
async def get_case_attribution(
    case_id: str, session: SessionDep, project: ProjectDep
) -> AttributionResult:
    """The case's stored attribution, without making one (``POST /attribute/{case_id}`` does);
    404 when the case has none yet."""
    return await attribution.stored_attribution(session, project, case_id)


@router.get("/attributions", response_model=list[AttributionResult], responses=responses(503))
async def get_attributions(
    session: SessionDep,
    project: ProjectDep,
    system: str | None = None,
    error_type: ErrorType | None = None,
    operation_name: str | None = None,
    status: Status | None = None,
    skip: Skip = 0,
    limit: Annotated[int, limit_query(1000)] = 100,
) -> list[AttributionResult]:
    """Stored attributions, newest first, filtered by the blamed operation and error type."""
    filters = {
        "system": system,
        "error_type": error_type,
        "operation_name": operation_name,
        "status": status,
    }
    return await attribution.list_attributions(session, project, filters, skip, limit)
