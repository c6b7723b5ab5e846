"""Routes of the browser views: the console's pages (``/ui/projects``, ``/ui/dashboard``,
``/ui/cases``, ``/ui/prompts``, ``/ui/audits``, ``/ui/jobs``, ``/ui/sessions`` and
``/ui/sessions/{id}``), the case view
(``/ui/cases/{id}``) and their static files.

They read through ``service.ui.service`` like every other route; errors become small HTML pages
(a person is reading), with the status code the JSON API would answer.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Header, Query, Response
from fastapi.responses import HTMLResponse, RedirectResponse
from neo4j import AsyncSession

import service.id_paths  # noqa: F401  (registers the {name:id} path convertor)
from service.auth import ProjectDep
from service.dependencies import SessionDep, SettingsDep
from service.error_responses import responses
from service.errors import NotFound
from service.ui import pages
from service.ui import service as ui
from service.ui.assets import asset
from service.ui.models import ConsolePage

router = APIRouter(prefix="/ui", tags=["ui"])

_HTML: dict[str, Any] = {"content": {"text/html": {}}}


def _html(body: str) -> HTMLResponse:
    # Errors raised below become an error page in ``service.http_errors`` (a page request).
    return HTMLResponse(body, headers=pages.PAGE_HEADERS)


entry_router = APIRouter(include_in_schema=False)
"""``/`` and ``/ui``: ways in, open without a key (they only redirect; the page asks for one)."""


# Relative redirects, so that the console works behind a proxy that mounts it under a path.
@entry_router.get("/")
@entry_router.get("/ui")
async def service_home() -> RedirectResponse:
    """The console's first page: the projects."""
    return RedirectResponse("ui/projects", status_code=307)


@router.get("/", include_in_schema=False)
async def ui_home() -> RedirectResponse:
    """The console's first page: the projects (not a project named by default)."""
    return RedirectResponse("projects", status_code=307)


async def _console(
    page: str,
    title: str,
    project: tuple[AsyncSession, str] | None,
    name: str | None = None,
    kind: str | None = None,
) -> HTMLResponse:
    """A console page; ``project``: the session and name of the project it shows, which must
    hold something (a mistyped name is a 404 page saying so, not an empty page)."""
    if project is not None:
        await ui.require_project(*project)
    base = "../" if name is not None else ""
    data = ConsolePage(
        page=page,
        title=title,
        project=project[1] if project else None,
        name=name,
        kind=kind,
        base=base,
    )
    return _html(pages.console_page(data))


# The console's pages are frames: each page's script reads the JSON API with the browser's key,
# so what a page shows is exactly what that key may read through the API.


@router.get("/projects", response_class=HTMLResponse, responses={200: _HTML})
async def ui_projects() -> HTMLResponse:
    """The projects this key may read, with their counts, failure share and last activity."""
    return await _console("projects", "Projects", None)


@router.get(
    "/dashboard", response_class=HTMLResponse, responses={200: _HTML, **responses(404, 422, 503)}
)
async def ui_dashboard(project: ProjectDep, session: SessionDep) -> HTMLResponse:
    """Failures by error type and system over time, what is blamed most, what waits."""
    return await _console("dashboard", "Dashboard", (session, project))


@router.get(
    "/cases", response_class=HTMLResponse, responses={200: _HTML, **responses(404, 422, 503)}
)
async def ui_cases(project: ProjectDep, session: SessionDep) -> HTMLResponse:
    """The project's cases: search, filters, sorting, paging; a verdict set from the list."""
    return await _console("cases", "Cases", (session, project))


@router.get(
    "/prompts", response_class=HTMLResponse, responses={200: _HTML, **responses(404, 422, 503)}
)
async def ui_prompts(project: ProjectDep, session: SessionDep) -> HTMLResponse:
    """The project's prompts and their versions' failure rates."""
    return await _console("prompts", "Prompts", (session, project))


@router.get(
    "/prompts/{name}",
    response_class=HTMLResponse,
    responses={200: _HTML, **responses(404, 422, 503)},
)
async def ui_prompt(name: str, project: ProjectDep, session: SessionDep) -> HTMLResponse:
    """One prompt: its versions' texts, a diff between two, what motivated each, "optimise"."""
    return await _console("prompt", f"Prompt {name}", (session, project), name)


@router.get(
    "/sessions", response_class=HTMLResponse, responses={200: _HTML, **responses(404, 422, 503)}
)
async def ui_sessions(project: ProjectDep, session: SessionDep) -> HTMLResponse:
    """The project's sessions (conversations): turns, operations, cases and failures of each."""
    return await _console("sessions", "Sessions", (session, project))


@router.get(
    "/sessions/{session_id:id}",
    response_class=HTMLResponse,
    responses={200: _HTML, **responses(404, 422, 503)},
)
async def ui_session(session_id: str, project: ProjectDep, session: SessionDep) -> HTMLResponse:
    """One session: its turns in order with the operations each caused, and its cases with
    their verdicts and attributions, each linking to its case page."""
    return await _console("session", f"Session {session_id}", (session, project), session_id)


@router.get(
    "/units/{unit_id:id}",
    response_class=HTMLResponse,
    responses={200: _HTML, **responses(404, 422, 503)},
)
async def ui_unit(unit_id: str, project: ProjectDep, session: SessionDep) -> HTMLResponse:
    """One unit: its content and attributes, what produced and consumed it, its cases."""
    return await _console("node", f"Unit {unit_id}", (session, project), unit_id, "unit")


@router.get(
    "/operations/{operation_id:id}",
    response_class=HTMLResponse,
    responses={200: _HTML, **responses(404, 422, 503)},
)
async def ui_operation(operation_id: str, project: ProjectDep, session: SessionDep) -> HTMLResponse:
    """One operation: what it consumed and produced, the cases blamed on it."""
    return await _console(
        "node", f"Operation {operation_id}", (session, project), operation_id, "operation"
    )


@router.get(
    "/audits", response_class=HTMLResponse, responses={200: _HTML, **responses(404, 422, 503)}
)
async def ui_audits(project: ProjectDep, session: SessionDep) -> HTMLResponse:
    """Each audit with its description and parameters; its rows link into the graph."""
    return await _console("audits", "Audits", (session, project))


@router.get(
    "/jobs", response_class=HTMLResponse, responses={200: _HTML, **responses(404, 422, 503)}
)
async def ui_jobs(project: ProjectDep, session: SessionDep) -> HTMLResponse:
    """Attribution jobs with live progress: start, stop, resume."""
    return await _console("jobs", "Attribution jobs", (session, project))


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
    data = await ui.case_page(session, project, case_id, settings, limit)
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
