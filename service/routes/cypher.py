from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated

from fastapi import APIRouter, Depends, Request
from neo4j import READ_ACCESS, AsyncSession

from service.auth import ProjectDep
from service.dependencies import SettingsDep
from service.models.adhoc import CypherRequest, CypherResult
from service.routes.errors import responses
from service.services.adhoc import run_cypher

router = APIRouter(tags=["audits"])

# Rows come from Neo4j in batches this big, so that reading can stop soon after the byte
# budget is spent instead of after the driver's default of 1,000 rows.
_FETCH_SIZE = 50


async def read_session(request: Request, settings: SettingsDep) -> AsyncIterator[AsyncSession]:
    """A read-access session: Neo4j itself refuses writes in its transactions. (No schema
    bootstrap as in ``get_session``: a read needs no constraint.)"""
    session = request.app.state.driver.session(
        database=settings.neo4j_database, default_access_mode=READ_ACCESS, fetch_size=_FETCH_SIZE
    )
    try:
        yield session
    finally:
        await session.close()


@router.post("/cypher", response_model=CypherResult, responses=responses(400, 422, 503))
async def post_cypher(
    request: CypherRequest,
    session: Annotated[AsyncSession, Depends(read_session)],
    settings: SettingsDep,
    project: ProjectDep,
) -> CypherResult:
    """Run one read-only Cypher query over one project's graph.

    The text is checked first (length, nesting, one plain query, no backquoted names), then
    Neo4j plans it: anything but a read (query type ``r``), and any read that does not start
    from nodes pinned to ``$project`` (e.g. ``(u:Unit {project: $project})``), is refused with a
    400 listing the reasons, before anything runs. The query then runs in a read-access
    transaction within a time budget (planning included), a row limit and a byte limit; a query
    Neo4j stops (timeout, memory) gets a 422. ``$project`` is provided.
    """
    return await run_cypher(session, request, project, settings)
