"""Kept GenAI log events and the stored operations they join (the only Cypher of it).

``keep_and_join`` keeps a log export's events and joins them to the operations of their spans
already stored, in one transaction; ``read_span_logs`` reads the events a trace export is
converted with; ``join_kept`` joins kept events to operations a trace export has just written
(the events that came while it was being converted). Why it is built so:
``ingest.otlp_joined``.
"""

from __future__ import annotations

import json
from typing import Any, TypeVar

from neo4j import AsyncManagedTransaction, AsyncSession
from pydantic import BaseModel, ValidationError

from cypher import query
from ingest.otlp_joined import StoredOperation, rejoined, units_of_events
from ingest.otlp_logs import SpanKey, event_json
from ingest.rows import batch_rows, operation_row
from service.db import store_errors, write_rerun
from service.errors import InvalidInput
from service.traces.models import OperationIn, TraceBatch
from service.traces.repository import UnitsLost, mark_reach_from, write_in

M = TypeVar("M", bound=BaseModel)


def _valid(model: type[M], value: dict[str, Any], loc: list[str]) -> M:
    """``value`` as ``model``; ``InvalidInput`` (the transaction, keeping the events too, rolls
    back) when the events joined make it invalid, e.g. a message over the length of a unit."""
    try:
        return model.model_validate(value)
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(part) for part in [*loc, *first["loc"]])
        raise InvalidInput(
            f"the log events joined to a span make an invalid MemTrace item: {where}: "
            f"{first['msg']}",
            details=[{"loc": [*loc, *err["loc"]], "msg": err["msg"]} for err in e.errors()],
        ) from e


def _node_id(key: SpanKey) -> str:
    return f"{key[0]}:{key[1]}"


def _decoded(rows: list[Any]) -> dict[SpanKey, list[dict[str, Any]]]:
    found: dict[SpanKey, list[dict[str, Any]]] = {}
    for record in rows:
        trace_id, span_id = str(record["id"]).split(":", 1)
        found[(trace_id, span_id)] = [json.loads(e) for e in record["events"]]
    return found


@store_errors
async def read_span_logs(
    session: AsyncSession, project: str, keys: list[SpanKey]
) -> dict[SpanKey, list[dict[str, Any]]]:
    """The events kept for the spans ``keys``, by span (spans without any are left out)."""
    if not keys:
        return {}

    async def work(tx: AsyncManagedTransaction) -> dict[SpanKey, list[dict[str, Any]]]:
        result = await tx.run(
            query("otlp/span_logs"), project=project, ids=[_node_id(k) for k in keys]
        )
        return _decoded([record async for record in result])

    return await session.execute_read(work)


@store_errors
async def keep_and_join(
    session: AsyncSession, project: str, events: dict[SpanKey, list[dict[str, Any]]]
) -> tuple[int, int]:
    """Keep ``events`` (a re-sent one is kept once) and join them to the stored operations of
    their spans; (events newly kept, operations changed)."""
    _valid(TraceBatch, {"project": project, "units": units_of_events(project, events)}, ["logs"])
    rows = [
        {
            "id": _node_id(key),
            "trace_id": key[0],
            "span_id": key[1],
            "events": list(dict.fromkeys(event_json(e) for e in span_events)),
        }
        for key, span_events in sorted(events.items())
    ]

    async def work(tx: AsyncManagedTransaction) -> tuple[int, int]:
        result = await tx.run(query("otlp/store_span_logs"), project=project, rows=rows)
        added = (await result.single(strict=True))["added"]
        return int(added or 0), await _join(tx, project, sorted(events))

    return await write_rerun(session, work)


@store_errors
async def join_kept(session: AsyncSession, project: str, keys: list[SpanKey]) -> int:
    """Join the events kept for the spans ``keys`` to their stored operations; the number of
    operations changed (0, without a write transaction, when no span has events kept)."""
    if not await read_span_logs(session, project, keys):
        return 0

    async def work(tx: AsyncManagedTransaction) -> int:
        return await _join(tx, project, keys)

    return await write_rerun(session, work)


async def _join(tx: AsyncManagedTransaction, project: str, keys: list[SpanKey]) -> int:
    """Set the stored operations of ``keys`` as they convert with every event kept for their
    spans; the units the events define are written first, by the batch writer's lookup path
    (a unit named before its text came, an answer, is defined then)."""
    result = await tx.run(
        query("otlp/lock_span_logs"), project=project, ids=[_node_id(k) for k in keys]
    )
    logs = _decoded([record async for record in result])
    if not logs:
        return 0
    result = await tx.run(
        query("otlp/joined_operations"),
        project=project,
        ids=[f"otel:{trace_id}:{span_id}" for trace_id, span_id in sorted(logs)],
    )
    stored = {}
    fingerprints = {}
    async for record in result:
        fingerprints[record["id"]] = record["fp"]
        stored[record["id"]] = StoredOperation(
            record["id"], record["kind"], record["attributes"], record["inputs"], record["outputs"]
        )
    if not stored:
        return 0
    joined = rejoined(project, list(stored.values()), logs)
    changed = []
    for definition in joined.operations:
        row = operation_row(_valid(OperationIn, definition, ["operations", definition["id"]]))
        if row["fp"] != fingerprints[row["id"]]:
            changed.append({**row, "old_fp": fingerprints[row["id"]]})
    if not changed:
        return 0
    if joined.units:
        batch = {"project": project, "units": joined.units}
        await write_in(tx, batch_rows(_valid(TraceBatch, batch, ["units"])))
    record = await (
        await tx.run(query("otlp/rejoin_operations"), project=project, rows=changed)
    ).single(strict=True)
    if record["lost"]:
        raise UnitsLost(sorted(record["lost"]))
    # The messages an operation now reads reach a memory when what it produced does.
    await mark_reach_from(
        tx, project, sorted({edge["unit"] for row in changed for edge in row["outputs"]})
    )
    return len(changed)
