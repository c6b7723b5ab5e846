"""Reading the source messages of a case's scope (see ``service.attribution.scope``)."""

from __future__ import annotations

from neo4j import AsyncManagedTransaction, AsyncSession

from cypher import query
from service.attribution.graph import Node
from service.attribution.rows import ScopeMessage, scope_message
from service.attribution.scope import Scope
from service.db import store_errors


@store_errors
async def scope_messages(
    session: AsyncSession, project: str, scope: Scope, limit: int
) -> list[ScopeMessage]:
    """The messages in ``scope`` recorded no later than ``scope.until``, latest first (at most
    ``limit``), decoded; a message's ``ts`` is when it was recorded."""

    async def work(tx: AsyncManagedTransaction) -> list[ScopeMessage]:
        result = await tx.run(
            query("attribution/scope_messages"),
            project=project,
            systems=list(scope.systems),
            sessions=list(scope.sessions),
            fragments=scope.fragments(),
            whole_project=scope.whole_project,
            until=scope.until,
            limit=limit,
        )
        record = await result.single()
        return [scope_message(row) for row in record["nodes"]] if record else []

    return await session.execute_read(work)


async def message_nodes(
    session: AsyncSession, project: str, scope: Scope, limit: int
) -> list[Node]:
    """The nodes of :func:`scope_messages`: what a case's graph takes of them."""
    return [m.node for m in await scope_messages(session, project, scope, limit)]
