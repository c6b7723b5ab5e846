"""Reading one unit or one operation with its direct neighbours."""

from __future__ import annotations

import json
from typing import Any

from neo4j import AsyncManagedTransaction, AsyncSession

from cypher import query
from service.db import store_errors
from service.neo4j_values import native


@store_errors
async def read_node(
    session: AsyncSession, project: str, node_id: str, operation: bool
) -> dict[str, Any] | None:
    """The row of ``nodes/operation`` or ``nodes/unit`` (attributes parsed, times native), or
    None when the project has no such node."""
    statement = "nodes/operation" if operation else "nodes/unit"

    async def work(tx: AsyncManagedTransaction) -> dict[str, Any] | None:
        result = await tx.run(query(statement), project=project, id=node_id)
        record = await result.single()
        return record.data() if record else None

    row = await session.execute_read(work)
    if row is None:
        return None
    row = {key: native(value) for key, value in row.items()}
    row["attributes"] = json.loads(row["attributes"]) if row["attributes"] else {}
    return row
