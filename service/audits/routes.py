"""GET /audits (the catalogue) and GET /audits/{name} (one page of an audit's rows)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request

from service.audits import service as audits
from service.audits.models import AuditInfo, AuditPage
from service.audits.parameters import COMMON_PARAMETERS
from service.auth import ProjectDep
from service.dependencies import BoundedReadSessionDep, SettingsDep
from service.error_responses import responses
from service.query_params import Skip, limit_query

router = APIRouter(prefix="/audits", tags=["audits"])


@router.get("", response_model=list[AuditInfo])
async def list_audits() -> list[AuditInfo]:
    """Every audit with its description, its own parameters (types, defaults) and its columns.

    Every audit also takes ``project``, ``skip`` and ``limit`` (``cursor`` instead of ``skip``
    for deleted_then_needed and retrieval_misses).
    """
    return audits.list_audits()


@router.get("/{name}", response_model=AuditPage, responses=responses(404, 422, 503))
async def run_audit(
    name: str,
    request: Request,
    session: BoundedReadSessionDep,
    settings: SettingsDep,
    project: ProjectDep,
    skip: Annotated[Skip, Query(description="Start here; use next_skip to page.")] = 0,
    limit: Annotated[int, limit_query(1000, "At most this many rows.")] = 100,
    cursor: Annotated[
        str | None,
        Query(
            max_length=4096,
            description="deleted_then_needed and retrieval_misses page with a cursor over the "
            "failed cases: the next_cursor of the previous page (none: the first page). They "
            "refuse a skip (422): it would walk every failed case before the page. A cursor "
            "of another audit or other parameters is a 422 saying what differs.",
        ),
    ] = None,
) -> AuditPage:
    """One page of the audit's rows for the project, read in read transactions within one
    time budget (``MEMTRACE_AUDIT_TIMEOUT_S``; past it a 422 says how to narrow the page).

    The audit's own parameters are further query parameters (see ``GET /audits``); an unknown
    one is refused (422) rather than ignored, so a typo never silently runs the defaults. Page
    with ``next_skip``: audits that finish their rule in the service count candidates there,
    and a page may come back short (``MEMTRACE_AUDIT_CANDIDATE_SCAN``) with more to come.
    deleted_then_needed and retrieval_misses page with ``next_cursor`` instead (a page covers
    at most ``MEMTRACE_AUDIT_CURSOR_CASES`` failed cases, so it costs the same wherever it
    starts, and may come back short or empty with more to come).
    """
    given = [
        (key, value)
        for key, value in request.query_params.multi_items()
        if key not in COMMON_PARAMETERS
    ]
    return await audits.run_audit(
        session,
        project,
        name,
        given,
        skip,
        limit,
        settings.audit_candidate_scan,
        settings.audit_timeout_s,
        cursor,
        settings.audit_cursor_cases,
    )
