"""Error-distribution reports of a project's stored attributions, as JSON and as an HTML page."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Depends, Query
from fastapi.responses import HTMLResponse

from service.auth import ProjectDep
from service.dependencies import BoundedReadSessionDep, SettingsDep
from service.error_responses import html_route_responses, responses
from service.reports import service as reports
from service.reports.models import Bucket, Report, ReportFilters

router = APIRouter(tags=["reports"])


def _filters(
    system: Annotated[
        str | None, Query(description="Only cases of this system (their answer's producer's).")
    ] = None,
    since: Annotated[
        datetime | None,
        Query(description="Only cases answered at or after this time (no zone: UTC)."),
    ] = None,
    until: Annotated[
        datetime | None, Query(description="Only cases answered before this time (no zone: UTC).")
    ] = None,
    bucket: Annotated[Bucket, Query(description="Period of the trend: UTC day or week.")] = "day",
    recount: Annotated[
        bool,
        Query(
            description="Count case by case instead of reading the counts kept as cases "
            "change. The kept counts answer every report whose since and until (if given) "
            "are UTC midnights, at a cost independent of the project's size; another since "
            "or until is counted case by case whatever this says. The answer's 'counted' "
            "says which was used. Both give the same figures."
        ),
    ] = False,
) -> ReportFilters:
    return ReportFilters(system=system, since=since, until=until, bucket=bucket, recount=recount)


FiltersDep = Annotated[ReportFilters, Depends(_filters)]


@router.get("/report", response_model=Report, responses=responses(422, 503))
async def get_report(
    session: BoundedReadSessionDep, settings: SettingsDep, filters: FiltersDep, project: ProjectDep
) -> Report:
    """Counts of the project's attributed failed cases by system, error type and operation,
    the most blamed operations and prompts, attribution cost, and a trend over time.

    A case's system is the system of the operation that produced its answer (else the blamed
    operation's); its time is its answer's ``ts`` (else the attribution's ``created_at``).
    ``since`` is inclusive, ``until`` exclusive. An empty project gives zeros. Its reads share
    a time budget (``MEMTRACE_AUDIT_TIMEOUT_S``); past it a 422 says how to narrow the report.
    """
    return await reports.build_report(session, project, filters, settings.audit_timeout_s)


@router.get(
    "/report.html",
    response_class=HTMLResponse,
    responses={200: {"content": {"text/html": {}}}, **html_route_responses(422, 503)},
)
async def get_report_html(
    session: BoundedReadSessionDep, settings: SettingsDep, filters: FiltersDep, project: ProjectDep
) -> HTMLResponse:
    """The same report as one self-contained HTML page with its plots embedded (no network)."""
    html = await reports.build_report_html(session, project, filters, settings.audit_timeout_s)
    return HTMLResponse(html)
