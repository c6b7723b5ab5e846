from __future__ import annotations

from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Query, Response

import service.id_paths  # noqa: F401  (registers the {name:id} path convertor)
from graph_schema import Verdict
from service.attribution.models import ErrorType
from service.auth import ProjectDep
from service.cases import service as cases
from service.cases.models import CaseFilters, CaseOrder, CaseSummary, CaseView, Subgraph, VerdictIn
from service.dependencies import SessionDep, SettingsDep
from service.error_responses import responses
from service.query_params import Skip, limit_query

router = APIRouter(prefix="/cases", tags=["cases"])


@router.get("", response_model=list[CaseSummary], responses=responses(422, 503))
async def list_cases(
    session: SessionDep,
    project: ProjectDep,
    verdict: Verdict | None = None,
    q: Annotated[
        str | None,
        Query(
            max_length=200,
            description="Only cases whose question or given answer contains this (any case).",
        ),
    ] = None,
    system: Annotated[
        str | None, Query(description="Only cases answered by this system (its operation's).")
    ] = None,
    session_id: Annotated[
        str | None, Query(description="Only cases answered in this session.")
    ] = None,
    since: Annotated[
        datetime | None, Query(description="Only cases answered at or after this (no zone: UTC).")
    ] = None,
    until: Annotated[
        datetime | None, Query(description="Only cases answered before this (no zone: UTC).")
    ] = None,
    error_type: Annotated[
        ErrorType | None, Query(description="Only cases whose stored attribution blames this.")
    ] = None,
    attributed: Annotated[
        bool | None, Query(description="Only cases with (true) or without (false) one.")
    ] = None,
    prompt_version: Annotated[
        str | None,
        Query(
            max_length=1000,
            description="Only cases whose stored attribution blames an operation that ran with "
            "this prompt version (its unit id, `prompt:<name>@<hash>`).",
        ),
    ] = None,
    sort: Annotated[
        CaseOrder, Query(description="`id`, or `newest` (by answer time, newest first).")
    ] = "id",
    skip: Skip = 0,
    limit: Annotated[int, limit_query(10_000)] = 1000,
) -> list[CaseSummary]:
    """The project's cases (``verdict=failed`` for failures, ``q`` to search the questions and
    answers, ``system``, ``session_id``, ``since`` and ``until`` for who answered and when,
    ``error_type`` and ``attributed`` for what attribution found), each with its question,
    expected and given answer, when, by which system and in which session it was answered,
    and its stored attribution's status and error type."""
    filters = CaseFilters(
        verdict=verdict,
        text=q,
        system=system,
        session=session_id,
        since=since,
        until=until,
        error_type=error_type,
        attributed=attributed,
        prompt_version=prompt_version,
        newest_first=sort == "newest",
    )
    return await cases.list_cases(session, project, filters, skip, limit)


@router.get("/{case_id:id}", response_model=CaseView, responses=responses(404, 503))
async def get_case(case_id: str, session: SessionDep, project: ProjectDep) -> CaseView:
    """A stored case with its answer unit and evidence unit ids."""
    return await cases.get_case(session, project, case_id)


@router.get("/{case_id:id}/subgraph", response_model=Subgraph, responses=responses(404, 422, 503))
async def get_case_subgraph(
    case_id: str,
    session: SessionDep,
    settings: SettingsDep,
    project: ProjectDep,
    limit: Annotated[
        int | None, Query(ge=1, description="Node limit (capped by the server).")
    ] = None,
) -> Response:
    """Every unit and operation the case's answer depends on, with the edges among them.

    At most ``limit`` nodes (the server's ``MEMTRACE_SUBGRAPH_NODE_LIMIT`` when not given, and
    never more) and ``MEMTRACE_SUBGRAPH_MAX_BYTES`` of JSON; ``truncated`` says when the
    ancestry was cut, ``truncated_by`` at which limit. A content longer than
    ``MEMTRACE_SUBGRAPH_VALUE_CHARS`` comes cut to its start, and attributes that long are left
    out: the node's ``cut`` gives their stored lengths.
    """
    bounds = cases.subgraph_bounds(settings, limit)
    subgraph = await cases.case_subgraph(session, project, case_id, bounds)
    # Already a validated model: serialise it once instead of letting FastAPI re-validate
    # thousands of nodes through response_model (which stays declared for the OpenAPI schema).
    return Response(subgraph.model_dump_json(), media_type="application/json")


@router.post(
    "/{case_id:id}/verdict", response_model=CaseView, responses=responses(400, 404, 422, 503)
)
async def post_verdict(
    case_id: str, verdict: VerdictIn, session: SessionDep, project: ProjectDep
) -> CaseView:
    """Record whether the case's answer was right, later (user feedback, an evaluation run
    afterwards): the case's id is enough, its answer unit need not be known. Idempotent: the
    same verdict sent again changes nothing. A verdict or expected answer that changes deletes
    the case's stored attribution (made for the old one). A failed case can then be attributed."""
    return await cases.record_verdict(session, project, case_id, verdict)
