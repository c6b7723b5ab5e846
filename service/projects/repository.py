"""Reading what each project holds, across projects (``GET /projects``)."""

from __future__ import annotations

from typing import Any

from neo4j import AsyncManagedTransaction, AsyncSession
from neo4j.time import DateTime

from cypher import query
from service.db import store_errors
from service.projects.models import ProjectSummary


def _newest(a: Any, b: Any) -> Any:
    return b if a is None or (b is not None and b > a) else a


def summaries_of(rows: list[dict[str, Any]]) -> list[ProjectSummary]:
    """Rows of ``projects/list_projects`` (one per project and label) as one model per project,
    in name order; neo4j times become datetimes here."""
    counts: dict[str, dict[str, Any]] = {}
    for row in rows:
        project = counts.setdefault(row["project"], {"project": row["project"]})
        project[row["what"]] = bool(row["n"]) if row["what"] == "deleting" else row["n"]
        project["last_activity"] = _newest(project.get("last_activity"), row["newest"])
    for project in counts.values():
        newest = project["last_activity"]
        project["last_activity"] = newest.to_native() if isinstance(newest, DateTime) else newest
    return [ProjectSummary(**counts[name]) for name in sorted(counts)]


@store_errors
async def list_projects(session: AsyncSession, projects: list[str] | None) -> list[ProjectSummary]:
    """Every project holding anything (only ``projects`` when given), with its counts."""

    async def work(tx: AsyncManagedTransaction) -> list[dict[str, Any]]:
        result = await tx.run(query("projects/list_projects"), projects=projects)
        return [record.data() async for record in result]

    return summaries_of(await session.execute_read(work))


@store_errors
async def being_deleted(session: AsyncSession, project: str) -> bool:
    """Whether ``project`` carries the mark of a deletion that has not finished."""

    async def work(tx: AsyncManagedTransaction) -> bool:
        result = await tx.run(query("projects/being_deleted"), project=project)
        record = await result.single()
        return bool(record and record["deleting"])

    return await session.execute_read(work)


@store_errors
async def holds_anything(session: AsyncSession, project: str) -> bool:
    """Whether ``project`` holds anything ``list_projects`` would list it for."""

    async def work(tx: AsyncManagedTransaction) -> bool:
        result = await tx.run(query("projects/holds_anything"), project=project)
        record = await result.single()
        return bool(record and record["holds"])

    return await session.execute_read(work)
