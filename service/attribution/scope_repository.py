"""Reading the source messages of a case's scope (see ``service.attribution.scope``)."""

from __future__ import annotations

from neo4j import AsyncManagedTransaction, AsyncSession

from cypher import query
from service.attribution.graph import NodeRead, ScopeRead
from service.attribution.row_cache import RowCache, listed_reads
from service.attribution.rows import scope_message
from service.attribution.scope import (
    NEIGHBOURHOOD_KINDS,
    NEIGHBOURHOOD_STEPS,
    RECENT_OPERATIONS,
    Scope,
)
from service.db import store_errors


@store_errors
async def scope_messages(
    session: AsyncSession, project: str, scope: Scope, limit: int
) -> ScopeRead:
    """The messages in ``scope`` recorded no later than ``scope.until``, latest first (at most
    ``limit``), decoded; a message's ``ts`` is when it was recorded. An unnamed scope's
    neighbourhood is read first, in the same read transaction."""

    async def work(tx: AsyncManagedTransaction) -> ScopeRead:
        messages: list[str] = []
        cut, how = False, None
        if scope.unnamed:
            messages, cut = await _neighbourhood(tx, project, scope, limit)
            if not messages and not scope.lineage:
                messages, cut = await _recent(tx, project, scope)
                how = "recent"
        result = await tx.run(
            query("attribution/scope_messages"),
            project=project,
            systems=list(scope.systems),
            sessions=list(scope.sessions),
            conversations=scope.values("conversation_id"),
            users=scope.values("user_id"),
            messages=messages,
            until=scope.until,
            limit=limit + 1,
        )
        record = await result.single()
        rows = [scope_message(row) for row in record["nodes"]] if record else []
        return ScopeRead(rows[:limit], cut or len(rows) > limit, how)

    return await session.execute_read(work)


@store_errors
async def store_writes(
    session: AsyncSession, project: str, scope: Scope, limit: int, cache: RowCache | None = None
) -> list[NodeRead]:
    """The versions and tombstones of the scope's memory stores written by ``scope.until``,
    with the operations that wrote them (at most ``limit`` writes, the latest), decoded
    (``cypher/attribution/store_write_ids``); through ``cache`` when given (``row_cache``)."""
    if not scope.stores:
        return []
    rows = cache if cache is not None else RowCache()

    async def work(tx: AsyncManagedTransaction) -> list[NodeRead]:
        return await listed_reads(
            tx,
            project,
            "attribution/store_write_ids",
            rows,
            stores=list(scope.stores),
            until=scope.until,
            limit=limit,
        )

    return await session.execute_read(work)


async def _recent(
    tx: AsyncManagedTransaction, project: str, scope: Scope
) -> tuple[list[str], bool]:
    """The last resort of an unnamed scope (``cypher/attribution/recent_messages``): the message
    ids, and whether the window was full (older messages were not read)."""
    result = await tx.run(
        query("attribution/recent_messages"),
        project=project,
        systems=list(scope.systems),
        until=scope.until,
        window=RECENT_OPERATIONS,
    )
    record = await result.single()
    if record is None:
        return [], False
    return sorted(record["ids"]), record["operations"] >= RECENT_OPERATIONS


async def _neighbourhood(
    tx: AsyncManagedTransaction, project: str, scope: Scope, limit: int
) -> tuple[list[str], bool]:
    """The message ids within :data:`NEIGHBOURHOOD_STEPS` of the scope's seeds, and whether the
    read stopped at ``limit`` units before it had taken every step. Breadth first, one statement
    per step (``cypher/attribution/neighbourhood``), after the memories of the scope's stores
    (``cypher/attribution/store_memories``); a frontier is sorted, so a cut keeps the same units
    every time."""
    seen: set[str] = set(scope.seeds)
    cut = False
    if scope.stores:
        result = await tx.run(
            query("attribution/store_memories"),
            project=project,
            stores=list(scope.stores),
            limit=limit + 1,
        )
        record = await result.single()
        stored: list[str] = record["ids"] if record else []
        cut = len(stored) > limit
        seen.update(stored[:limit])
    messages: set[str] = set()
    frontier = sorted(seen)
    for _ in range(NEIGHBOURHOOD_STEPS):
        if not frontier:
            break
        result = await tx.run(
            query("attribution/neighbourhood"),
            project=project,
            ids=frontier,
            systems=list(scope.systems),
        )
        record = await result.single()
        found = sorted(row for row in (record["units"] if record else []) if row[0] not in seen)
        frontier = []
        for unit_id, kind in found:
            if len(seen) >= limit:
                return sorted(messages), True
            seen.add(unit_id)
            if kind == "message":
                messages.add(unit_id)
            if kind in NEIGHBOURHOOD_KINDS:
                frontier.append(unit_id)
    return sorted(messages), cut
