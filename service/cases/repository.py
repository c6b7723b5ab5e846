"""Reading cases and the ancestor subgraph of their answers."""

from __future__ import annotations

import json
from typing import Any

from neo4j import AsyncManagedTransaction, AsyncSession

from cypher import query
from service.cases.models import CaseFilters, CaseView, Subgraph, SubgraphBounds
from service.db import store_errors
from service.neo4j_values import from_epoch, native
from service.read_budget import ByteBudget, json_bytes
from service.reports.counts import repository as kept


def _attributes(value: str | None) -> dict[str, Any]:
    return json.loads(value) if value else {}


def _node_fields(row: dict[str, Any]) -> dict[str, Any]:
    """One projected row of ``cases/ancestors`` as the fields of a ``SubgraphNode``.

    Plain values, validated with the whole subgraph in one call (``_read_ancestors``): a model
    built per node cost more than the rest of the node's Python work."""
    is_op = row["is_operation"]
    cut = {
        name: row[f"{name}_chars"]
        for name in ("content", "attributes")
        if row[f"{name}_chars"] is not None
    }
    return {
        "type": "operation" if is_op else "unit",
        "id": row["id"],
        "kind": row["kind"],
        "name": row["name"],
        "content": row["content"],
        "system": row["system"],
        "session_id": row["session_id"],
        "ts": from_epoch(row["ts"]),
        "defined": True if is_op else bool(row["defined"]),
        "attributes": _attributes(row["attributes"]),
        "cut": cut,
    }


def _size(fields: dict[str, Any], edges: list[dict[str, Any]]) -> int:
    """The bytes a node and its edges add to the subgraph's JSON, as the case page holds it
    too (markup characters escaped), each with its comma; ``ts`` in its longest ISO form."""
    ts = fields["ts"]
    node = {**fields, "ts": ts.isoformat() if ts else None}
    return json_bytes(node, in_page=True) + 1 + json_bytes(edges, in_page=True) + len(edges)


async def read_case(tx: AsyncManagedTransaction, project: str, case_id: str) -> CaseView | None:
    result = await tx.run(query("cases/get_case"), project=project, case_id=case_id)
    record = await result.single()
    if record is None:
        return None
    props = dict(record["case"])
    answers = record["answer_units"]
    return CaseView(
        project=project,
        id=props["id"],
        question=props["question"],
        expected_answer=props["expected_answer"],
        verdict=props["verdict"],
        answer_unit=answers[0] if answers else None,
        evidence_units=list(record["evidence_units"]),
        attributes=_attributes(props.get("attributes")),
    )


async def ancestor_rows(
    tx: AsyncManagedTransaction, project: str, unit_id: str, limit: int, value_chars: int
) -> list[dict[str, Any]]:
    """Projected rows (see ``cypher/cases/ancestors.cypher``) of at most ``limit`` ancestors,
    their long values cut at ``value_chars``."""
    result = await tx.run(
        query("cases/ancestors"),
        project=project,
        unit_id=unit_id,
        limit=limit,
        value_chars=value_chars,
    )
    record = await result.single()
    return list(record["nodes"]) if record else []


async def _read_ancestors(
    tx: AsyncManagedTransaction, project: str, case_id: str, unit_id: str, bounds: SubgraphBounds
) -> Subgraph:
    rows = await ancestor_rows(tx, project, unit_id, bounds.node_limit + 1, bounds.value_chars)
    truncated_by = "nodes" if len(rows) > bounds.node_limit else None
    subgraph: dict[str, Any] = {
        "case_id": case_id,
        "answer_unit": unit_id,
        "nodes": [],
        "edges": [],
        "node_limit": bounds.node_limit,
        "truncated": True,
        "truncated_by": "nodes",
        "byte_limit": bounds.max_bytes,
        "value_chars": bounds.value_chars,
        "cut_values": 2 * bounds.node_limit,  # its widest, for the count below
    }
    # The nodes in the order Neo4j found them (nearest the answer first) while they fit.
    budget = ByteBudget(bounds.max_bytes, used=json_bytes(subgraph, in_page=True))
    for row in rows[: bounds.node_limit]:
        fields = _node_fields(row)
        edges = [
            {"type": kind, "operation": row["id"], "unit": unit, "position": position}
            for kind, unit, position in row["edges"]
        ]
        if not budget.take(_size(fields, edges)):
            truncated_by = "bytes"
            break
        subgraph["nodes"].append(fields)
        subgraph["edges"].extend(edges)
    unit_ids = {n["id"] for n in subgraph["nodes"] if n["type"] == "unit"}
    subgraph["edges"] = [e for e in subgraph["edges"] if e["unit"] in unit_ids]
    subgraph["truncated"] = truncated_by is not None
    subgraph["truncated_by"] = truncated_by
    subgraph["cut_values"] = sum(len(n["cut"]) for n in subgraph["nodes"])
    return Subgraph.model_validate(subgraph)


@store_errors
async def get_case(session: AsyncSession, project: str, case_id: str) -> CaseView | None:
    """The case, or None when this project has no case with that id."""
    return await session.execute_read(read_case, project, case_id)


@store_errors
async def case_with_ancestors(
    session: AsyncSession, project: str, case_id: str, bounds: SubgraphBounds
) -> tuple[CaseView | None, Subgraph | None]:
    """The case and, when it has an answer unit, every node that answer depends on (as many
    as ``bounds`` allow, with the edges among them), read in one transaction."""

    async def work(tx: AsyncManagedTransaction) -> tuple[CaseView | None, Subgraph | None]:
        case = await read_case(tx, project, case_id)
        if case is None or case.answer_unit is None:
            return case, None
        return case, await _read_ancestors(tx, project, case_id, case.answer_unit, bounds)

    return await session.execute_read(work)


@store_errors
async def list_cases(
    session: AsyncSession, project: str, filters: CaseFilters, skip: int, limit: int
) -> list[dict[str, Any]]:
    """A page of the project's cases (``cases/list_cases`` says what each holds); ``filters``
    as the statement takes them (times in UTC, text in lower case)."""

    async def work(tx: AsyncManagedTransaction) -> list[dict[str, Any]]:
        statement = "cases/list_cases_newest" if filters.newest_first else "cases/list_cases"
        result = await tx.run(
            query(statement),
            project=project,
            **filters.model_dump(exclude={"newest_first"}),
            skip=skip,
            limit=limit,
        )
        return [{k: native(v) for k, v in r.data().items()} async for r in result]

    return await session.execute_read(work)


@store_errors
async def record_verdict(
    session: AsyncSession,
    project: str,
    case_id: str,
    verdict: str,
    expected_answer: str | None,
    note: str | None,
) -> CaseView | None:
    """Set the case's verdict (and expected answer, and ``verdict_note`` attribute, when given)
    and return the case as stored; None when the project has no such case. Read and write run
    in one transaction, so the note is merged into the attributes the case has at that time."""

    async def work(tx: AsyncManagedTransaction) -> CaseView | None:
        case = await read_case(tx, project, case_id)
        if case is None:
            return None
        attributes = {**case.attributes, **({"verdict_note": note} if note is not None else {})}
        before = await kept.counted_before(tx, project, [case_id])
        await tx.run(
            query("verdicts/record_verdict"),
            project=project,
            case_id=case_id,
            verdict=verdict,
            expected_answer=expected_answer,
            # Stored the way ingest stores attributes: canonical JSON, None when empty.
            attributes=json.dumps(attributes, sort_keys=True, separators=(",", ":"))
            if attributes
            else None,
        )
        await kept.count_again(tx, project, before)
        return await read_case(tx, project, case_id)

    return await session.execute_write(work)
