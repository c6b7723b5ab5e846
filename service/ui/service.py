"""What the case page shows: a case with its ancestor subgraph and stored attribution (the
console's other pages read the JSON API from the browser; they need only their project to
exist).

The page only reads. A case that was never attributed is shown without an attribution (the page
offers to run one through ``POST /attribute``); reading a page never starts an attribution.
"""

from __future__ import annotations

from neo4j import AsyncSession

from service.attribution import service as attributions
from service.attribution.models import AttributionResult
from service.cases import service as cases
from service.errors import NotFound
from service.projects import service as projects
from service.prompts.service import labels
from service.sessions import service as sessions
from service.settings import Settings
from service.ui.models import CasePage


async def require_project(session: AsyncSession, project: str) -> None:
    """``ProjectNotFound`` (a 404 page) unless ``project`` holds something."""
    await projects.require_project(session, project)


async def case_page(
    session: AsyncSession, project: str, case_id: str, settings: Settings, limit: int | None
) -> CasePage:
    """The case, its answer's ancestors (at most ``limit`` nodes and the byte and value budgets
    of ``settings``, as ``GET /cases/{id}/subgraph``) and its stored attribution.

    Unlike ``GET /cases/{id}/subgraph``, a case without an answer unit is no error here: the page
    still shows the question and says there is nothing to draw.
    """
    bounds = cases.subgraph_bounds(settings, limit)
    case, subgraph = await cases.case_with_subgraph(session, project, case_id, bounds)
    try:
        stored: AttributionResult | None = await attributions.stored_attribution(
            session, project, case_id
        )
    except NotFound:  # never attributed: the page offers to run one
        stored = None
    shown = {n.id for n in subgraph.nodes if n.kind == "prompt"} if subgraph else set()
    versions = await labels(session, project) if shown else {}
    return CasePage(
        case=case,
        subgraph=subgraph,
        attribution=stored,
        prompt_versions={uid: label for uid, label in versions.items() if uid in shown},
        sessions=await sessions.case_sessions(session, project, case_id),
    )
