"""Reading prompt versions and the failures blamed on them; storing an optimised version."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any, LiteralString

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
    forced: str | None


def _version(record: dict[str, Any]) -> VersionRow | None:
    attributes = _json(record["attributes"])
    name, digest = attributes.get(NAME_KEY), attributes.get(HASH_KEY)
    if not isinstance(name, str) or not isinstance(digest, str):
        return None  # a prompt unit that is no version (an imported graph's, an old OTLP one)
    times = [t for t in (_native(record["first_consumed"]), _native(record["produced_at"])) if t]
    produced = _json(record["produced_attributes"])
    cases = produced.get("cases", [])
    forced = produced.get("forced")
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
        forced=forced if isinstance(forced, str) else None,
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


@dataclass(frozen=True)
class Claim:
    """The outcome of claiming a prompt's optimisation: whether it was claimed, and the
    optimisation holding it since ``claimed_at`` (the claimant's own id when it was)."""

    claimed: bool
    holder: str
    claimed_at: datetime | None


@store_errors
async def claim_optimization(
    session: AsyncSession, project: str, name: str, operation_id: str, stale_s: float
) -> Claim:
    """Claim prompt ``name`` for the optimisation ``operation_id`` (see
    ``cypher/prompts/claim_optimization.cypher``)."""

    async def work(tx: AsyncManagedTransaction) -> Claim:
        result = await tx.run(
            query("prompts/claim_optimization"),
            project=project,
            name=name,
            operation_id=operation_id,
            stale_s=stale_s,
        )
        record = await result.single(strict=True)
        return Claim(record["claimed"], record["holder"], _native(record["claimed_at"]))

    return await session.execute_write(work)


async def _on_claim(
    session: AsyncSession, statement: LiteralString, project: str, name: str, operation_id: str
) -> dict[str, Any] | None:
    """Run ``statement`` (a query of ``cypher/prompts/``) on the claim ``operation_id`` holds on
    prompt ``name``, in a write transaction of its own; its row, if any."""

    async def work(tx: AsyncManagedTransaction) -> dict[str, Any] | None:
        result = await tx.run(statement, project=project, name=name, operation_id=operation_id)
        record = await result.single()
        return record.data() if record else None

    return await session.execute_write(work)


@store_errors
async def renew_claim(session: AsyncSession, project: str, name: str, operation_id: str) -> bool:
    """Renew the claim; whether ``operation_id`` still holds it."""
    row = await _on_claim(session, query("prompts/renew_claim"), project, name, operation_id)
    return bool(row and row["owned"])


@store_errors
async def release_claim(session: AsyncSession, project: str, name: str, operation_id: str) -> None:
    """Release the claim ``operation_id`` holds on prompt ``name`` (nothing if it holds none)."""
    await _on_claim(session, query("prompts/release_claim"), project, name, operation_id)


@dataclass(frozen=True)
class StoreRefused:
    """Why an optimised version was not written: the claim's holder now (None: nobody) and the
    optimisations that already produced a version from the same old version."""

    holder: str | None
    children: list[str]


@store_errors
async def store_optimization(
    session: AsyncSession,
    rows: BatchRows,
    name: str,
    parent_id: str,
    operation_id: str,
    case_ids: list[str],
) -> StoreRefused | None:
    """Write the new version and the optimization operation (``rows``) and link the operation
    to the attributions it used, in one transaction; first check there, under the claim's lock,
    that ``operation_id`` still holds prompt ``name`` and that no optimisation produced a
    version from ``parent_id`` yet (``cypher/prompts/check_claim.cypher``). When not, nothing
    is written and what was found is returned."""

    async def work(tx: AsyncManagedTransaction) -> StoreRefused | None:
        check = await tx.run(
            query("prompts/check_claim"), project=rows.project, name=name, parent_id=parent_id
        )
        found = await check.single(strict=True)
        holder, children = found["holder"], list(found["children"])
        if holder != operation_id or children:
            return StoreRefused(holder, children)
        await write_in(tx, rows)
        await (
            await tx.run(
                query("prompts/link_attributions"),
                project=rows.project,
                operation_id=operation_id,
                case_ids=case_ids,
            )
        ).consume()
        return None

    return await write_rerun(session, work)
