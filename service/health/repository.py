"""The readiness probe's one query."""

from __future__ import annotations

from neo4j import AsyncManagedTransaction, AsyncSession

from cypher import query
from service.db import store_errors


@store_errors
async def ping(session: AsyncSession) -> None:
    """Raises ``StoreUnavailable`` unless the database answers a query."""

    async def work(tx: AsyncManagedTransaction) -> None:
        await (await tx.run(query("health/ping"))).consume()

    await session.execute_read(work)
