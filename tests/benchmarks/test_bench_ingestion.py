"""The ingestion benchmark's limit writes the same graph as ``POST /traces``, on both shapes,
and its two service slots serve the same requests.

The benchmark's ratio API / limit means something only if the limit's bare ``CREATE`` statements
store what the service stores: the same nodes with the same properties and the same edges. The
two differ only in what the limit does not compute (fingerprints, the marks), left out here.
Its ratio API / before means something only if neither slot does work the other does not.
"""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

import httpx
import pytest
from neo4j import AsyncGraphDatabase, Driver, ManagedTransaction

from benchmarks.ingest.throughput import (
    PLAIN,
    SERVED,
    SHAPES,
    limit_rows,
    minimal_schema,
    round_steps,
    shape_streams,
    turns,
)
from cypher import query
from tests.support.graph import graph_snapshot
from tests.support.servers import Neo4jHandle

COMPUTED = frozenset({"project", "fp", "reaches_memory", "rewrites_memory"})
"""Properties only the service computes (the limit stores placeholders)."""


def _limit_write(tx: ManagedTransaction, project: str, rows: dict[str, Any]) -> None:
    if rows["seeds"]:
        tx.run(query("ingest/create_unit_refs"), project=project, ids=rows["seeds"]).consume()
    tx.run(query("ingest/create_units"), project=project, rows=rows["units"]).consume()
    tx.run(query("ingest/create_operations"), project=project, rows=rows["operations"]).consume()


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_limit_writes_the_graph_the_api_writes(
    shape: str, client: httpx.Client, project: str, neo4j_driver: Driver
) -> None:
    api, limit = f"{project}-api", f"{project}-limit"
    for batch in shape_streams(shape, api, 30, 10, 1)[0]:
        assert client.post("/traces", json=batch).status_code == 200
    for batch in shape_streams(shape, limit, 30, 10, 1)[0]:
        with neo4j_driver.session(database="neo4j") as session:
            session.execute_write(_limit_write, limit, limit_rows(batch))
    nodes, edges = graph_snapshot(neo4j_driver, api, COMPUTED)
    # 30 operations and their 60 memories; the chain's first inputs (2 seeds, by id only), the
    # extraction's 60 inline messages.
    assert len(nodes) == {"chain": 92, "extraction": 150}[shape]
    assert (nodes, edges) == graph_snapshot(neo4j_driver, limit, COMPUTED)


TRACE_NODE = (
    "MATCH (n:$any($labels) {project: $project}) "
    "RETURN n.id AS id, n.kind AS kind, n.content AS content, n.name AS name, toString(n.ts) AS ts"
)
TRACE_EDGE = (
    "MATCH (o:$any($labels) {project: $project})-[r:CONSUMES|PRODUCES]->(u) "
    "RETURN o.id AS op, type(r) AS type, r.position AS position, u.id AS unit"
)


def _trace(driver: Driver, project: str, labels: list[str]) -> tuple[list[Any], list[Any]]:
    """What the trace sent, as stored: every node's id, kind, content, name and time, and every
    CONSUMES / PRODUCES edge with its position, sorted."""
    found = []
    for statement in (TRACE_NODE, TRACE_EDGE):
        records, _, _ = driver.execute_query(
            statement, project=project, labels=labels, database_="neo4j"
        )
        found.append(sorted(tuple(r.values()) for r in records))
    return found[0], found[1]


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_minimal_graph_carries_what_the_api_stores_of_the_trace(
    shape: str, client: httpx.Client, project: str, neo4j: Neo4jHandle, neo4j_driver: Driver
) -> None:
    """The minimal limit holds every operation, unit and edge the trace sent, as the API stores
    them, and nothing the service derives."""
    api, minimal = f"{project}-api", f"{project}-minimal"
    for batch in shape_streams(shape, api, 30, 10, 1)[0]:
        assert client.post("/traces", json=batch).status_code == 200

    async def write_minimal() -> None:
        driver = AsyncGraphDatabase.driver(neo4j.uri, auth=(neo4j.user, neo4j.password))
        try:
            await minimal_schema(driver)
            async with driver.session(database="neo4j") as session:
                for batch in shape_streams(shape, minimal, 30, 10, 1)[0]:
                    await PLAIN["minimal"](session, batch)
        finally:
            await driver.close()

    asyncio.run(write_minimal())
    stored = _trace(neo4j_driver, api, ["Unit", "Operation"])
    assert len(stored[0]) == {"chain": 92, "extraction": 150}[shape]
    assert _trace(neo4j_driver, minimal, ["MinimalUnit", "MinimalOperation"]) == stored
    keys, _, _ = neo4j_driver.execute_query(
        "MATCH (n:MinimalUnit|MinimalOperation {project: $project}) "
        "UNWIND keys(n) AS key RETURN collect(DISTINCT key) AS keys",
        project=minimal,
        database_="neo4j",
    )
    sent = {"project", "id", "kind", "content", "ts", "name", "system", "session_id"}
    assert set(keys[0]["keys"]) <= sent


def test_both_service_slots_take_the_same_requests_in_every_round() -> None:
    paths = ("limit", "api", "direct", "before")
    rounds = [round_steps(paths, r) for r in range(2 * len(paths))]
    for steps in rounds:
        for slot in SERVED:
            assert [what for path, what in steps if path == slot] == ["new", "resend", "conflict"]
        # Re-sends and conflicts come after every path's new batches, so none lies between two.
        whats = [what for _, what in steps]
        assert whats == ["new"] * len(paths) + ["resend", "conflict"] * len(SERVED)


@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_each_path_goes_first_and_follows_each_other_equally_often(n: int) -> None:
    cycle = [turns(n, r) for r in range(n if n % 2 == 0 else 2 * n)]
    for row in cycle:
        assert sorted(row) == list(range(n))
    firsts = [row[0] for row in cycle]
    assert all(firsts.count(i) == len(cycle) // n for i in range(n))
    pairs = [(a, b) for row in cycle for a, b in itertools.pairwise(row)]
    assert all(
        pairs.count((a, b)) == len(pairs) // (n * (n - 1))
        for a in range(n)
        for b in range(n)
        if a != b
    )
