"""Reading the source messages of a case's scope (see ``service.attribution.scope``)."""

from __future__ import annotations

from typing import Any

from neo4j import AsyncManagedTransaction, AsyncSession

from cypher import query
from service.attribution.scope import Scope
from service.db import store_errors


@store_errors
async def scope_messages(
    session: AsyncSession, project: str, scope: Scope, limit: int
) -> list[dict[str, Any]]:
    """Projected rows of the messages in ``scope`` recorded no later than ``scope.until``,
    latest first (at most ``limit``); ``ts`` is when each was recorded."""

    async def work(tx: AsyncManagedTransaction) -> list[dict[str, Any]]:
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
        return list(record["nodes"]) if record else []

    return await session.execute_read(work)
