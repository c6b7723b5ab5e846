"""A project's OTLP warnings log: what its exports were warned or refused about, newest kept."""

from __future__ import annotations

import json
from typing import Any

from neo4j import AsyncManagedTransaction, AsyncSession

from cypher import query
from service.db import store_errors
from service.otlp.models import OtlpWarning, OtlpWarnings

KEEP = 100
"""Entries kept per project: enough to read what the last exports were told."""


@store_errors
async def record(session: AsyncSession, project: str, entries: list[OtlpWarning]) -> None:
    """Append ``entries`` (oldest first) to ``project``'s log, in a transaction of its own."""
    if not entries:
        return
    rows = [entry.model_dump_json() for entry in entries]

    async def work(tx: AsyncManagedTransaction) -> None:
        result = await tx.run(
            query("otlp/record_warnings"), project=project, entries=rows, keep=KEEP
        )
        await result.consume()

    await session.execute_write(work)


@store_errors
async def read(session: AsyncSession, project: str) -> OtlpWarnings:
    """``project``'s log, newest entry first; empty when it was never warned."""

    async def work(tx: AsyncManagedTransaction) -> dict[str, Any] | None:
        result = await tx.run(query("otlp/read_warnings"), project=project)
        found = await result.single()
        return found.data() if found else None

    row = await session.execute_read(work)
    if row is None:
        return OtlpWarnings(project=project, total=0, warnings=[])
    entries = [OtlpWarning(**json.loads(e)) for e in reversed(row["entries"] or [])]
    return OtlpWarnings(project=project, total=row["total"], warnings=entries)
