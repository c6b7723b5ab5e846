"""Reading prompt versions and the failures blamed on them; storing an optimised version."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from neo4j import AsyncManagedTransaction, AsyncSession, AsyncTransaction
from neo4j.time import DateTime

from cypher import query
from graph_schema.prompts import HASH_KEY, NAME_KEY
from ingest.rows import BatchRows
from service.db import store_errors, write_rerun
from service.read_budget import Deadline, read_within
from service.traces.repository import write_in


def _native(value: Any) -> Any:
    return value.to_native() if isinstance(value, DateTime) else value


def _json(value: str | None) -> dict[str, Any]:
    return json.loads(value) if value else {}


@dataclass(frozen=True)
class VersionRow:
    """One stored prompt version (see ``cypher/prompts/versions.cypher``)."""

    id: str
    name: str
    hash: str
    text: str | None
    operations: int
    first_used: datetime | None
    produced_by: str | None
    parent: str | None
    motivated_by: list[str]
    failures: dict[str, int]


def _version(record: dict[str, Any]) -> VersionRow | None:
    attributes = _json(record["attributes"])
    name, digest = attributes.get(NAME_KEY), attributes.get(HASH_KEY)
    if not isinstance(name, str) or not isinstance(digest, str):
        return None  # a prompt unit that is no version (an imported graph's, an old OTLP one)
    times = [t for t in (_native(record["first_consumed"]), _native(record["produced_at"])) if t]
    cases = _json(record["produced_attributes"]).get("cases", [])
    return VersionRow(
        id=record["id"],
        name=name,
        hash=digest,
        text=record["text"],
        operations=record["operations"],
        first_used=min(times) if times else None,
        produced_by=record["produced_by"],
        parent=record["parent"],
        motivated_by=[str(c) for c in cases] if isinstance(cases, list) else [],
        failures={str(k): int(n) for k, n in record["failures"]},
    )


@store_errors
async def versions(
    session: AsyncSession,
    project: str,
    name: str | None,
    with_text: bool,
    deadline: Deadline | None = None,
) -> list[VersionRow]:
    """Every prompt version of the project (of prompt ``name`` only, when given). With a
    ``deadline`` (a report's), read within it (``service.read_budget``; ``session`` a
    read-access one)."""
    prefix = f"prompt:{name}@" if name else "prompt:"

    async def work(tx: AsyncManagedTransaction | AsyncTransaction) -> list[dict[str, Any]]:
        result = await tx.run(
            query("prompts/versions"), project=project, prefix=prefix, with_text=with_text
        )
        return [record.data() async for record in result]

    if deadline is None:
        records = await session.execute_read(work)
    else:
        records = await read_within(session, deadline, work)
    rows = [_version(r) for r in records]
    return [r for r in rows if r is not None and (name is None or r.name == name)]


@store_errors
async def failed_cases(
    session: AsyncSession, project: str, version_id: str, filters: dict[str, Any], limit: int
) -> list[dict[str, Any]]:
    """Failed cases blamed on operations that ran with ``version_id`` (see
    ``cypher/prompts/failed_cases.cypher`` for the filters and what each row holds)."""

    async def work(tx: AsyncManagedTransaction) -> list[dict[str, Any]]:
        result = await tx.run(
            query("prompts/failed_cases"),
            {"project": project, "version_id": version_id, "limit": limit, **filters},
        )
        return [record.data() async for record in result]

    return await session.execute_read(work)


@store_errors
async def store_optimization(
    session: AsyncSession, rows: BatchRows, operation_id: str, case_ids: list[str]
) -> None:
    """Write the new version and the optimization operation (``rows``) and link the operation
    to the attributions it used, in one transaction."""

    async def work(tx: AsyncManagedTransaction) -> None:
        await write_in(tx, rows)
        await (
            await tx.run(
                query("prompts/link_attributions"),
                project=rows.project,
                operation_id=operation_id,
                case_ids=case_ids,
            )
        ).consume()

    await write_rerun(session, work)
