"""POST /cypher against the guard bypasses of issue 9: each must be refused before it runs.

Every query in BYPASSES read other projects' data through the guard as it was (it read the
plan's display text and cut it at the first " WHERE "); the pinned queries at the end must keep
working. The graph holds two projects, so a query that escapes its project would return rows.
"""

from __future__ import annotations

import httpx
import pytest
from neo4j import Driver

from service.adhoc.guard import plan_problems
from tests.support.graph import run
from tests.support.traces import demo_batch

FAKE = "`x WHERE project = $project AND y`"
"""A variable or label named like a pinning predicate: Neo4j copies it into the plan text."""


@pytest.fixture
def two_projects(client: httpx.Client, project: str) -> tuple[str, str]:
    other = f"{project}-other"
    for p in (project, other):
        assert client.post("/traces", json=demo_batch(p)).status_code == 200
    return project, other


BYPASSES = {
    "match_variable": f"MATCH ({FAKE}) RETURN {FAKE}.content AS c",
    "match_label_scan_variable": f"MATCH ({FAKE}:Unit) RETURN {FAKE}.content AS c",
    "label_name": "MATCH (n:`Unit WHERE project = $project AND n`) RETURN n",
    "call_subquery": f"CALL () {{ MATCH ({FAKE}:Case) RETURN {FAKE}.id AS id }} RETURN id",
    "collect_subquery": f"RETURN COLLECT {{ MATCH ({FAKE}:Case) RETURN {FAKE}.id }} AS ids",
    "count_subquery": (
        f"RETURN COUNT {{ MATCH ({FAKE}:Unit) WHERE {FAKE}.kind = 'message' }} AS n"
    ),
    "exists_subquery": f"RETURN EXISTS {{ MATCH ({FAKE}:Unit) }} AS e",
    "union": (
        "MATCH (u:Unit {project: $project}) RETURN u.content AS c "
        f"UNION MATCH ({FAKE}:Unit) RETURN {FAKE}.content AS c"
    ),
    "optional_match": f"OPTIONAL MATCH ({FAKE}:Unit) RETURN {FAKE}.content AS c",
    "shortest_path": (
        "MATCH (a:Unit {project: $project}) WITH a LIMIT 1 "
        f"MATCH p = shortestPath((a)-[*]-({FAKE})) RETURN p"
    ),
    # Subquery expressions Neo4j plans as nested plans inside an expression: no operator of the
    # plan tree shows their scan, only the expression text does.
    "count_in_list_comprehension": (
        "MATCH (u:Unit {project: $project}) WITH u LIMIT 1 "
        "RETURN [x IN [1] | COUNT { MATCH (n) RETURN n }] AS n"
    ),
    "collect_in_case": (
        "MATCH (u:Unit {project: $project}) WITH u LIMIT 1 "
        "RETURN CASE WHEN u.id IS NOT NULL THEN COLLECT { MATCH (n:Unit) RETURN n.content } END"
    ),
    "count_in_reduce": (
        "MATCH (u:Unit {project: $project}) WITH u LIMIT 1 "
        "RETURN reduce(s = 0, x IN [1] | s + COUNT { (n:Case) }) AS n"
    ),
    "exists_in_any": (
        "MATCH (u:Unit {project: $project}) "
        "WHERE any(x IN [1] WHERE EXISTS { MATCH (n:Case) WHERE n.project <> $project }) "
        "RETURN count(u) AS n"
    ),
    "pattern_comprehension_in_list": (
        "MATCH (u:Unit {project: $project}) WITH u LIMIT 1 "
        "RETURN [x IN [1] | [(n:Unit)-->(m) | m.content]] AS leaked"
    ),
}


@pytest.mark.parametrize("query", BYPASSES.values(), ids=BYPASSES.keys())
def test_guard_bypasses_are_refused(
    client: httpx.Client, two_projects: tuple[str, str], query: str
) -> None:
    mine, _ = two_projects
    response = run(client, mine, query)
    assert response.status_code == 400, response.text[:500]
    body = response.json()
    assert body["error"] == "query_refused" and body["details"]


def test_a_refused_identifier_says_why(client: httpx.Client, project: str) -> None:
    body = run(client, project, f"MATCH ({FAKE}:Unit) RETURN 1").json()
    assert "backquoted" in body["message"]
    assert body["details"][0]["loc"] == ["body", "query"]


MORE_HOSTILE = {
    "or_true": "MATCH (u:Unit) WHERE u.project = $project OR true RETURN u.content",
    "parameter_name": "MATCH (u:Unit) WHERE u.project = $`project` OR true RETURN u.content",
    # Precedence: AND binds tighter than OR, so this is (pin AND kind) OR true.
    "and_or_precedence": (
        "MATCH (u:Unit) WHERE u.project = $project AND u.kind = 'x' OR u.kind = 'message' "
        "RETURN u.project AS p"
    ),
    "xor": "MATCH (u:Unit) WHERE u.project = $project XOR true RETURN u.content",
    "other_project_literal": "MATCH (u:Unit {project: 'x'}) RETURN u.content",
    "node_by_id": "MATCH (n) WHERE id(n) = 0 RETURN n",
    "unwind_ids": "UNWIND range(0, 100) AS i MATCH (n) WHERE id(n) = i RETURN n.content",
    "element_id": "MATCH (n) WHERE elementId(n) STARTS WITH '4' RETURN n.content",
    "relationship_scan": "MATCH ()-[r]-() RETURN properties(r)",
    "relationship_type_scan": "MATCH (a)-[r:CONSUMES]->(b) RETURN a.content",
    "union_one_branch": (
        "MATCH (u:Unit {project: $project}) RETURN u.id AS i "
        "UNION ALL MATCH (c:Case) RETURN c.id AS i"
    ),
    "filter_after_aggregation": (
        "MATCH (u:Unit) WITH collect(u) AS us, count(u) AS total UNWIND us AS u "
        "WITH u, total WHERE u.project = $project RETURN total LIMIT 1"
    ),
    "pin_on_another_variable": (
        "MATCH (a:Unit {project: $project}) WITH a LIMIT 1 MATCH (b:Unit) "
        "WHERE a.project = $project RETURN b.content"
    ),
    "procedure": "CALL db.labels() YIELD label RETURN label",
    "cypher_option": "CYPHER runtime=slotted MATCH (u:Unit {project: $project}) RETURN u.id",
    "cypher_debug": "CYPHER debug=tostring MATCH (u:Unit {project: $project}) RETURN u.id",
    "explain_prefix": "EXPLAIN MATCH (u:Unit {project: $project}) RETURN u.id",
    "profile_prefix": "PROFILE MATCH (u:Unit {project: $project}) RETURN u.id",
    "use_clause": "USE neo4j MATCH (u:Unit {project: $project}) RETURN u.id",
    "show": "SHOW TRANSACTIONS",
    # Around the pin among other properties (issue 21): confined only when the pin is an
    # AND-ed condition on the scanned variable, after nothing that could fail.
    "pin_in_an_or": (
        "MATCH (o:Operation) WHERE (o.project = $project AND o.name = 'x') OR o.kind = 'search' "
        "RETURN o.project AS p"
    ),
    "pin_or_property_and_property": (
        "MATCH (o:Operation) WHERE (o.project = $project OR o.name = 'question-answering') "
        "AND o.kind = 'response' RETURN o.project AS p"
    ),
    "pin_xor_property": (
        "MATCH (o:Operation) WHERE (o.name = 'question-answering' XOR o.project = $project) "
        "RETURN o.project AS p"
    ),
    "pin_in_an_optional_branch": (
        "MATCH (u:Unit) OPTIONAL MATCH (u {project: $project, kind: 'answer'}) RETURN u.content"
    ),
    "pin_on_another_variable_in_a_group": (
        "MATCH (a:Unit {project: $project}) WITH a LIMIT 1 MATCH (b:Unit) "
        "WHERE (a.project = $project AND b.kind = 'answer') RETURN b.content"
    ),
    "pin_on_another_variable_after_a_property": (
        "MATCH (a:Unit {project: $project, kind: 'message'}) WITH a LIMIT 1 MATCH (b:Unit) "
        "WHERE b.kind = 'message' AND a.project = $project RETURN b.content"
    ),
    "second_pattern_unpinned": (
        "MATCH (o:Operation {project: $project, name: 'question-answering'}), "
        "(p:Operation {name: 'question-answering'}) RETURN p.project AS p"
    ),
    "project_from_another_parameter": (
        "MATCH (o:Operation {name: 'question-answering', project: $other}) RETURN o.project"
    ),
}


@pytest.mark.parametrize("query", MORE_HOSTILE.values(), ids=MORE_HOSTILE.keys())
def test_other_escapes_are_refused(
    client: httpx.Client, two_projects: tuple[str, str], query: str
) -> None:
    mine, _ = two_projects
    response = run(client, mine, query)
    assert response.status_code in (400, 422), response.text[:500]
    assert response.json()["error"] in ("query_refused", "invalid_input")


PINNED = {
    "label_scan_filter": "MATCH (u:Unit {project: $project}) RETURN DISTINCT u.project AS p",
    "index_seek": (
        "MATCH (c:Case {project: $project, verdict: 'failed'}) RETURN DISTINCT c.project AS p"
    ),
    "all_nodes_filter": "MATCH (n) WHERE n.project = $project RETURN DISTINCT n.project AS p",
    "optional_match": (
        "MATCH (u:Unit {project: $project}) OPTIONAL MATCH (u)-[:PRODUCED_BY]->(o:Operation) "
        "RETURN DISTINCT coalesce(o.project, u.project) AS p"
    ),
    "call_subquery": (
        "CALL () { MATCH (c:Case) WHERE c.project = $project RETURN c } "
        "RETURN DISTINCT c.project AS p"
    ),
    "collect_subquery": (
        "WITH COLLECT { MATCH (c:Case {project: $project}) RETURN DISTINCT c.project } AS ps "
        "UNWIND ps AS p RETURN p"
    ),
    "union_both_pinned": (
        "MATCH (u:Unit {project: $project}) RETURN u.project AS p "
        "UNION MATCH (c:Case {project: $project}) RETURN c.project AS p"
    ),
    "shortest_path_both_pinned": (
        "MATCH (c:Case {project: $project})-[:ANSWERED_BY]->(a:Unit) "
        "MATCH (m:Unit {project: $project, kind: 'message'}) WITH a, m LIMIT 1 "
        "MATCH p = shortestPath((a)-[*..12]-(m)) "
        "UNWIND nodes(p) AS n RETURN DISTINCT n.project AS p"
    ),
    "two_labels": "MATCH (x:Unit|Case) WHERE x.project = $project RETURN DISTINCT x.project AS p",
    # The pin among other properties: Neo4j plans a label scan and one parenthesised filter
    # group, in the map's order (issue 21).
    "pin_then_property": (
        "MATCH (o:Operation {project: $project, name: 'question-answering'}) "
        "RETURN DISTINCT o.project AS p"
    ),
    "property_then_pin": (
        "MATCH (o:Operation {name: 'question-answering', project: $project}) "
        "RETURN DISTINCT o.project AS p"
    ),
    "properties_around_the_pin_in_where": (
        "MATCH (o:Operation) WHERE o.name = 'question-answering' AND o.project = $project "
        "AND o.system = 'mem0-classic' RETURN DISTINCT o.project AS p"
    ),
    "all_nodes_with_another_property": (
        "MATCH (n {kind: 'answer', project: $project}) RETURN DISTINCT n.project AS p"
    ),
    "expansion_to_a_pinned_group": (
        "MATCH (c:Case {project: $project})-[:ANSWERED_BY]->(u:Unit {project: $project, "
        "kind: 'answer'}) RETURN DISTINCT u.project AS p"
    ),
}


@pytest.mark.parametrize("query", PINNED.values(), ids=PINNED.keys())
def test_pinned_queries_still_run(
    client: httpx.Client, two_projects: tuple[str, str], query: str
) -> None:
    mine, _ = two_projects
    response = run(client, mine, query)
    assert response.status_code == 200, response.text[:500]
    assert response.json()["rows"] == [[mine]]


def test_the_guides_form_with_another_property_counts_the_project(
    client: httpx.Client, two_projects: tuple[str, str], neo4j_driver: Driver
) -> None:
    # Issue 21: refused as "NodeByLabelScan ... is not pinned" though the guide recommends it.
    mine, _ = two_projects
    query = "MATCH (o:Operation {project: $project, name: 'question-answering'}) RETURN count(o)"
    response = run(client, mine, query)
    assert response.status_code == 200, response.text[:500]
    expected = neo4j_driver.execute_query(query, project=mine, database_="neo4j").records[0][0]
    assert response.json()["rows"] == [[expected]] and expected > 0


def _label_scan_under(condition: str) -> dict[str, object]:
    """A plan as EXPLAIN gives it: a label scan of ``o`` under a filter on ``condition``."""
    scan = {"operatorType": "NodeByLabelScan@neo4j", "identifiers": ["o"],
            "args": {"Details": "o:Operation"}, "children": []}  # fmt: skip
    return {
        "operatorType": "ProduceResults@neo4j",
        "args": {"Details": "o"},
        "children": [
            {"operatorType": "Filter@neo4j", "args": {"Details": condition}, "children": [scan]}
        ],
    }


@pytest.mark.parametrize(
    ("condition", "pinned"),
    [
        ("o.project = $project", True),
        ("(o.project = $project AND o.name = $autostring_0)", True),
        ("(o.name = $autostring_0 AND cache[o.kind] = $kind AND o.project = $project)", True),
        ("(o.name = $autostring_0 AND o.project = $project) AND size(o.id) = $autoint_1", True),
        # A condition that may fail (1/0) on another project's node before the pin: refused.
        ("$autoint_0 / size(o.name) = $autoint_1 AND o.project = $project", False),
        ("(o.name = o.system AND o.project = $project)", False),
        ("(p.name = $autostring_0 AND o.project = $project)", False),
        ("(o.project = $project AND o.name = $autostring_0) OR o.kind = $autostring_1", False),
        ("(o.project = $project OR o.name = $autostring_0) AND o.kind = $autostring_1", False),
        ("NOT (o.project = $project AND o.name = $autostring_0)", False),
        ("(o.project = $other AND o.name = $autostring_0)", False),
        ("(o.name = $autostring_0) AND (o.project = $project)", True),
    ],
)
def test_a_filter_pins_its_scan_only_with_the_pin_before_anything_that_may_fail(
    condition: str, pinned: bool
) -> None:
    problems = plan_problems(_label_scan_under(condition))
    assert (problems == []) is pinned, problems
