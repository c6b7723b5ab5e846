"""The readiness probe's queries: that each store answers, and which database the default one is."""

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


@store_errors
async def store_id(session: AsyncSession) -> str:
    """The database's id (``cypher/health/store_id.cypher``)."""

    async def work(tx: AsyncManagedTransaction) -> str:
        record = await (await tx.run(query("health/store_id"))).single(strict=True)
        return str(record["store_id"])

    return await session.execute_read(work)
