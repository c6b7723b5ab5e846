"""Looking at the graph directly (over Bolt), beside the API, and asking it through the API."""

from __future__ import annotations

from typing import Any

import httpx
from neo4j import Driver


def graph_counts(driver: Driver, project: str) -> dict[str, int]:
    """The nodes and edges of a project's traces: not its kept report counts (``ReportCount``,
    bookkeeping the writer keeps beside the graph, tested in tests/reports)."""
    records, _, _ = driver.execute_query(
        "MATCH (n {project: $project}) WHERE NOT n:ReportCount"
        " RETURN count(n) AS nodes, sum(COUNT { (n)-->() }) AS edges",
        project=project,
        database_="neo4j",
    )
    row = records[0]
    return {"nodes": row["nodes"], "edges": row["edges"]}


def run(client: httpx.Client, project: str, query: str, **body: object) -> httpx.Response:
    return client.post("/cypher", params={"project": project}, json={"query": query, **body})


def read_by(driver: Driver, project: str, op_id: str) -> list[str]:
    """The texts an operation consumed, and those its inputs were made from (one step up): what
    the adapters' tests check a blamed operation read."""
    rows = driver.execute_query(
        "MATCH (o:Operation {project: $p, id: $id})-[:CONSUMES]->(u:Unit) "
        "OPTIONAL MATCH (u)<-[:PRODUCES]-(:Operation)-[:CONSUMES]->(m:Unit) "
        "RETURN collect(DISTINCT u.content) + collect(DISTINCT m.content) AS texts",
        p=project,
        id=op_id,
    ).records
    return list(rows[0]["texts"])


def recorded_operations(driver: Driver, project: str) -> list[tuple[str, str, int, int]]:
    """Each operation of the project as (name, kind, inputs, outputs), in recorded order: the
    shape of a trace an adapter wrote."""
    rows = driver.execute_query(
        "MATCH (o:Operation {project: $p}) RETURN o.name AS name, o.kind AS kind, "
        "COUNT { (o)-[:CONSUMES]->() } AS ins, COUNT { (o)-[:PRODUCES]->() } AS outs "
        "ORDER BY o.ts",
        p=project,
    ).records
    return [(r["name"], r["kind"], r["ins"], r["outs"]) for r in rows]


def graph_snapshot(
    driver: Driver, project: str, leave_out: frozenset[str] = frozenset({"project"})
) -> tuple[list[Any], list[Any]]:
    """The project's operations, units and cases with their properties (but ``leave_out``), and
    the edges from them with theirs, sorted: two projects written alike compare equal."""
    nodes, _, _ = driver.execute_query(
        "MATCH (n {project: $project}) WHERE n:Operation OR n:Unit OR n:Case "
        "RETURN labels(n) AS labels, properties(n) AS props",
        project=project,
        database_="neo4j",
    )
    edges, _, _ = driver.execute_query(
        "MATCH (a {project: $project})-[r]->(b) WHERE a:Operation OR a:Unit OR a:Case "
        "RETURN a.id AS a, type(r) AS type, properties(r) AS props, b.id AS b",
        project=project,
        database_="neo4j",
    )
    return (
        sorted(
            (r["labels"], sorted((k, str(v)) for k, v in r["props"].items() if k not in leave_out))
            for r in nodes
        ),
        sorted((r["a"], r["type"], sorted(r["props"].items()), r["b"]) for r in edges),
    )
