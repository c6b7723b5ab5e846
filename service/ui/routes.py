"""Routes of the browser views: ``/ui/cases/{id}``, ``/ui/cases``, and their static files.

They read through ``service.ui.service`` like every other route; errors become small HTML pages
(a person is reading), with the status code the JSON API would answer.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Header, Query, Response
from fastapi.responses import HTMLResponse, RedirectResponse

import service.id_paths  # noqa: F401  (registers the {name:id} path convertor)
from graph_schema import Verdict
from service.auth import ProjectDep
from service.dependencies import SessionDep, SettingsDep
from service.error_responses import responses
from service.errors import NotFound
from service.ui import pages
from service.ui import service as ui
from service.ui.assets import asset

router = APIRouter(prefix="/ui", tags=["ui"])

_HTML: dict[str, Any] = {"content": {"text/html": {}}}


def _html(body: str) -> HTMLResponse:
    # Errors raised below become an error page in ``service.http_errors`` (a page request).
    return HTMLResponse(body, headers=pages.PAGE_HEADERS)


@router.get("/", include_in_schema=False)
async def ui_home(project: ProjectDep) -> RedirectResponse:
    """The failed cases of the project."""
    return RedirectResponse(f"cases?project={project}&verdict=failed", status_code=307)


@router.get(
    "/cases",
    response_class=HTMLResponse,
    responses={200: _HTML, **responses(422, 503)},  # errors are HTML pages here (http_errors)
)
async def ui_cases(
    session: SessionDep,
    project: ProjectDep,
    verdict: Verdict | None = None,
) -> HTMLResponse:
    """An HTML list of the project's cases (``verdict=failed`` for failures) with their stored
    attributions, each linking to its case view."""
    data = await ui.case_list(session, project, verdict)
    return _html(pages.case_list_page(data))


@router.get(
    "/cases/{case_id:id}",
    response_class=HTMLResponse,
    responses={200: _HTML, **responses(404, 422, 503)},
)
async def ui_case(
    case_id: str,
    session: SessionDep,
    settings: SettingsDep,
    project: ProjectDep,
    limit: Annotated[
        int | None, Query(ge=1, description="Node limit (capped by the server).")
    ] = None,
) -> HTMLResponse:
    """The case in the browser: question, answers, verdict, its stored attribution, and the
    graph of everything its answer depends on (drawn by vis-network, served by this service)."""
    node_limit = settings.node_limit(limit)
    data = await ui.case_page(session, project, case_id, node_limit)
    return _html(pages.case_page(data))


@router.get("/static/{name}", responses=responses(404), include_in_schema=False)
async def ui_static(name: str, if_none_match: Annotated[str | None, Header()] = None) -> Response:
    """Our scripts and styles and the vis-network library, with ETags (304 when unchanged)."""
    found = asset(name)
    if found is None:
        raise NotFound(f"no static file {name!r} under /ui/static")
    headers = {
        "ETag": found.etag,
        "Cache-Control": found.cache_control,
        "X-Content-Type-Options": "nosniff",
    }
    if if_none_match and found.etag in {tag.strip() for tag in if_none_match.split(",")}:
        return Response(status_code=304, headers=headers)
    return Response(found.body, media_type=found.media_type, headers=headers)
