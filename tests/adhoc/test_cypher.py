"""POST /cypher: read-only, confined to one project, bounded — tried with hostile queries.

Each refused query must be answered 400 before anything runs: the graph is counted before and
after. The guard's rules are in service/adhoc/guard.py.
"""

from __future__ import annotations

import httpx
import pytest
from neo4j import Driver, RoutingControl

from service.adhoc.service import to_json
from tests.support.graph import run
from tests.support.traces import demo_batch


def graph_size(driver: Driver) -> tuple[object, ...]:
    """Counts that any write would change: nodes, labels, properties, content, edges, indexes."""
    record = driver.execute_query(
        "MATCH (n) RETURN count(n) AS nodes, sum(size(labels(n))) AS labels, "
        "sum(size(keys(n))) AS keys, sum(size(coalesce(n.content, ''))) AS content, "
        "COUNT { MATCH ()-[r]->() RETURN r } AS rels"
    ).records[0]
    indexes = driver.execute_query("SHOW INDEXES YIELD name RETURN count(*) AS n").records[0]
    constraints = driver.execute_query("SHOW CONSTRAINTS YIELD name RETURN count(*) AS n").records[
        0
    ]
    return (*record.values(), indexes["n"], constraints["n"])


@pytest.fixture
def two_projects(client: httpx.Client, project: str) -> tuple[str, str]:
    other = f"{project}-other"
    for p in (project, other):
        assert client.post("/traces", json=demo_batch(p)).status_code == 200
    return project, other


def test_a_pinned_read_returns_rows_of_the_project_only(
    client: httpx.Client, two_projects: tuple[str, str]
) -> None:
    mine, other = two_projects
    response = run(
        client,
        mine,
        "MATCH (c:Case {project: $project, verdict: 'failed'})-[:ANSWERED_BY]->(a:Unit) "
        "RETURN c.id AS case, a AS answer, c.project AS project ORDER BY case",
    )
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["columns"] == ["case", "answer", "project"]
    assert body["query_type"] == "r" and body["truncated"] is False
    assert [row[0] for row in body["rows"]] == ["case-1", "case-2", "case-3", "case-4", "case-5"]
    assert {row[2] for row in body["rows"]} == {mine}
    answer = body["rows"][0][1]
    assert answer["labels"] == ["Unit"] and answer["properties"]["kind"] == "answer"
    # A label scan filtered on the project is also fine, and parameters are passed through.
    counted = run(
        client,
        mine,
        "MATCH (u:Unit) WHERE u.project = $project AND u.kind = $kind RETURN count(u) AS n",
        parameters={"kind": "message"},
    ).json()
    assert counted["rows"][0][0] > 0
    # Expanding from pinned nodes stays inside the project.
    reached = run(
        client,
        other,
        "MATCH (u:Unit {project: $project})-[:PRODUCED_BY|CONSUMES*1..6]->(x) "
        "RETURN DISTINCT x.project AS p",
    ).json()
    assert reached["rows"] == [[other]]


HOSTILE = [
    # writes and schema: Neo4j classifies them as not read-only
    "CREATE (n:Unit {project: $project, id: 'evil'}) RETURN n",
    "MATCH (u:Unit {project: $project}) SET u.content = 'overwritten'",
    "MATCH (u:Unit {project: $project}) DETACH DELETE u",
    "MATCH (u:Unit {project: $project}) REMOVE u:Unit",
    "MERGE (n:Case {project: $project, id: 'x'})",
    "MATCH (u:Unit {project: $project}) FOREACH (_ IN [1] | SET u.x = 1)",
    "CREATE INDEX evil FOR (n:Unit) ON (n.content)",
    "DROP CONSTRAINT unit_key",
    "MATCH (u:Unit {project: $project}) CALL (u) { SET u.y = 1 } IN TRANSACTIONS",
    # reads outside the project
    "MATCH (n) RETURN n.content",
    "MATCH (u:Unit) RETURN u.content",
    "MATCH (u:Unit) WHERE u.project = $project OR true RETURN u.content",
    "MATCH (u:Unit {project: 'somebody-else'}) RETURN u.content",
    "MATCH (a:Unit {project: $project}), (b:Unit) RETURN b.content",
    "MATCH (a:Unit {project: $project}) CALL (a) { MATCH (b:Unit) RETURN b LIMIT 1 } "
    "RETURN b.content",
    "MATCH (n) WHERE elementId(n) = '4:00000000-0000-0000-0000-000000000000:0' RETURN n",
    "MATCH ()-[r:CONSUMES]->() RETURN count(r)",
    "MATCH (u:Unit) RETURN count(u)",
    "RETURN COUNT { MATCH (x:Unit) RETURN x } AS n",
    "CALL db.labels() YIELD label RETURN label",
    "SHOW USERS",
    "LOAD CSV FROM 'file:///etc/passwd' AS line RETURN line",
    "USE system SHOW DATABASES",
    # not one statement
    "MATCH (u:Unit {project: $project}) RETURN u; MATCH (n) DETACH DELETE n",
    "THIS IS NOT CYPHER",
]


@pytest.mark.parametrize("query", HOSTILE)
def test_hostile_queries_are_refused_before_running(
    client: httpx.Client, two_projects: tuple[str, str], neo4j_driver: Driver, query: str
) -> None:
    mine, _ = two_projects
    before = graph_size(neo4j_driver)
    response = run(client, mine, query)
    assert response.status_code == 400, response.text
    body = response.json()
    assert body["error"] == "query_refused"
    assert body["details"] and all(d["loc"] == ["body", "query"] for d in body["details"])
    assert "Traceback" not in response.text
    assert graph_size(neo4j_driver) == before


def test_project_cannot_be_overridden_by_parameters(
    client: httpx.Client, two_projects: tuple[str, str]
) -> None:
    mine, other = two_projects
    response = run(
        client,
        mine,
        "MATCH (u:Unit {project: $project}) RETURN u.id",
        parameters={"project": other},
    )
    assert response.status_code == 422
    assert response.json()["details"][0]["loc"] == ["body", "parameters", "project"]


def test_rows_are_limited_and_truncation_is_reported(
    client: httpx.Client, two_projects: tuple[str, str]
) -> None:
    mine, _ = two_projects
    body = run(client, mine, "MATCH (u:Unit {project: $project}) RETURN u.id", limit=3).json()
    assert len(body["rows"]) == 3 and body["truncated"] is True and body["row_limit"] == 3
    everything = run(client, mine, "UNWIND range(1, 5000) AS x RETURN x", limit=100_000).json()
    assert everything["row_limit"] == 1000 and len(everything["rows"]) == 1000  # server cap
    assert everything["truncated"] is True


def test_bad_bodies_are_422(client: httpx.Client, project: str) -> None:
    assert client.post("/cypher", params={"project": project}, json={}).status_code == 422
    assert run(client, project, "").status_code == 422
    assert run(client, project, "RETURN 1", limit=0).status_code == 422
    long = "RETURN 1 " + " " * 30_000
    assert run(client, project, long).status_code == 422


def test_unknown_body_fields_are_422_naming_them(client: httpx.Client, project: str) -> None:
    # `project` comes from the query string; in the body it was ignored without a word.
    response = client.post(
        "/cypher",
        params={"project": project},
        json={"query": "RETURN 1 AS x", "project": "someone-else", "limt": 3},
    )
    assert response.status_code == 422, response.text
    body = response.json()
    assert body["error"] == "invalid_input"
    assert sorted(d["loc"] for d in body["details"]) == [["body", "limt"], ["body", "project"]]


SAME_ROWS = {
    "nodes": (
        "MATCH (c:Case {project: $project})-[:ANSWERED_BY]->(a:Unit) RETURN c, a ORDER BY c.id"
    ),
    "relationships_unnamed": (
        "MATCH (u:Unit {project: $project})-[r]->(x) "
        "RETURN u.id, r, type(r), x.id ORDER BY u.id, type(r), x.id"
    ),
    "paths": (
        "MATCH p = (u:Unit {project: $project})-[*1..3]->(x) "
        "RETURN p, length(p) AS n ORDER BY n DESC, u.id, x.id LIMIT 40"
    ),
    "lists_and_maps": (
        "MATCH (u:Unit {project: $project}) WITH u ORDER BY u.id "
        "RETURN collect(u.id) AS ids, {n: count(u), kinds: collect(DISTINCT u.kind)} AS m, "
        "[[1, [2.5, 'x']], {a: {b: null}}] AS nested"
    ),
    "aggregation": (
        "MATCH (o:Operation {project: $project}) "
        "RETURN o.kind, count(*) ORDER BY count(*) DESC, o.kind"
    ),
    "distinct_star": (
        "MATCH (u:Unit {project: $project}) WITH u.kind AS kind RETURN DISTINCT * ORDER BY kind"
    ),
    "union": (
        "MATCH (u:Unit {project: $project}) RETURN u.id AS i "
        "UNION MATCH (c:Case {project: $project}) RETURN c.id AS i"
    ),
    "union_all_subquery": (
        "CALL () { MATCH (c:Case {project: $project}) RETURN c.id AS i "
        "UNION ALL MATCH (c:Case {project: $project}) RETURN c.verdict AS i } "
        "RETURN i, count(*) ORDER BY i"
    ),
    "temporal_and_odd": (
        "MATCH (u:Unit {project: $project}) WITH u ORDER BY u.id LIMIT 3 "
        "RETURN u.ts, 0.0 / 0.0 AS nan, date('2024-02-29'), 'a`b' + \"c\" ORDER BY u.ts"
    ),
    "names_like_keywords": "UNWIND [2, 1] AS limit RETURN limit, limit + 1 ORDER BY limit",
}


@pytest.mark.parametrize("query", SAME_ROWS.values(), ids=SAME_ROWS.keys())
def test_the_answer_is_what_neo4j_returns_for_the_query(
    client: httpx.Client, two_projects: tuple[str, str], neo4j_driver: Driver, query: str
) -> None:
    # The service runs the query wrapped (service/adhoc/bound.py): same columns, same rows.
    mine, _ = two_projects
    response = run(client, mine, query)
    assert response.status_code == 200, response.text[:500]
    body = response.json()
    records, _, keys = neo4j_driver.execute_query(
        query, project=mine, database_="neo4j", routing_=RoutingControl.READ
    )
    assert body["columns"] == keys
    assert body["rows"] == [[to_json(v) for v in record.values()] for record in records]
    assert body["rows"] and body["truncated"] is False
