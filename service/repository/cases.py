"""Reading cases and the ancestor subgraph of their answers."""

from __future__ import annotations

import json
from typing import Any

from neo4j import AsyncManagedTransaction, AsyncSession
from neo4j.graph import Node
from neo4j.time import DateTime

from cypher import query
from graph_schema.views import CaseView, Subgraph, SubgraphEdge, SubgraphNode
from service.db import store_errors


def _attributes(value: str | None) -> dict[str, Any]:
    return json.loads(value) if value else {}


def _native(value: Any) -> Any:
    return value.to_native() if isinstance(value, DateTime) else value


def node_to_model(node: Node) -> SubgraphNode:
    """One graph node as the API shows it (neo4j time types become Python datetimes here)."""
    props = dict(node)
    is_op = "Operation" in node.labels
    return SubgraphNode(
        type="operation" if is_op else "unit",
        id=props["id"],
        kind=props.get("kind"),
        name=props.get("name"),
        content=props.get("content"),
        system=props.get("system"),
        session_id=props.get("session_id"),
        ts=_native(props.get("ts")),
        defined=True if is_op else bool(props.get("defined", False)),
        attributes=_attributes(props.get("attributes")),
    )


@store_errors
async def get_case(session: AsyncSession, project: str, case_id: str) -> CaseView | None:
    """The case, or None when this project has no case with that id."""

    async def work(tx: AsyncManagedTransaction) -> CaseView | None:
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

    return await session.execute_read(work)


@store_errors
async def ancestors(
    session: AsyncSession, project: str, case_id: str, unit_id: str, limit: int
) -> Subgraph:
    """Every node ``unit_id`` depends on, at most ``limit`` of them, with the edges among them."""

    async def work(tx: AsyncManagedTransaction) -> list[tuple[Node, list[dict[str, Any]]]]:
        result = await tx.run(
            query("cases/ancestors"), project=project, unit_id=unit_id, limit=limit + 1
        )
        return [(record["node"], record["edges"]) async for record in result]

    rows = await session.execute_read(work)
    truncated = len(rows) > limit
    rows = rows[:limit]
    nodes = [node_to_model(node) for node, _ in rows]
    unit_ids = {n.id for n in nodes if n.type == "unit"}
    edges = [
        SubgraphEdge(type=e["type"], operation=node.id, unit=e["unit"], position=e["position"])
        for node, (_, op_edges) in zip(nodes, rows, strict=True)
        for e in op_edges
        if e["unit"] in unit_ids
    ]
    return Subgraph(
        case_id=case_id,
        answer_unit=unit_id,
        nodes=nodes,
        edges=edges,
        node_limit=limit,
        truncated=truncated,
    )
