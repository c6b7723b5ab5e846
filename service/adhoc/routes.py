from __future__ import annotations

from fastapi import APIRouter

from service.adhoc.models import CypherRequest, CypherResult
from service.adhoc.service import run_cypher
from service.auth import ProjectDep
from service.dependencies import ReadSessionDep, SettingsDep
from service.error_responses import responses

router = APIRouter(tags=["audits"])


@router.post("/cypher", response_model=CypherResult, responses=responses(400, 422, 503))
async def post_cypher(
    request: CypherRequest,
    session: ReadSessionDep,
    settings: SettingsDep,
    project: ProjectDep,
) -> CypherResult:
    """Run one read-only Cypher query over one project's graph.

    The text is checked first (length, nesting, one plain query, no backquoted names), then
    Neo4j plans it: anything but a read (query type ``r``), and any read that does not start
    from nodes pinned to ``$project`` (e.g. ``(u:Unit {project: $project})``), is refused with a
    400 listing the reasons, before anything runs. The query then runs in a read-access
    transaction within a time budget (planning included), a row limit and a byte limit, wrapped
    so that Neo4j never sends a row bigger than the byte limit; a query Neo4j stops (timeout,
    memory) gets a 422. ``$project`` is provided; a body field other than ``query``,
    ``parameters`` and ``limit`` is a 422.
    """
    return await run_cypher(session, request, project, settings)
