"""POST /traces against the running service and a real Neo4j."""

from __future__ import annotations

import concurrent.futures
from typing import Any

import httpx
from neo4j import Driver

from tests.support.graph import graph_counts
from tests.support.traces import chain_batch, demo_batch


def test_batch_lands_and_counts_what_it_created(client: httpx.Client, project: str) -> None:
    response = client.post("/traces", json=demo_batch(project))
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["project"] == project
    # 6 messages + 29 units defined inline in operations; 16 operations; 6 cases.
    assert body["created"] == {"units": 35, "operations": 16, "cases": 6}
    assert body["existing"] == {"units": 0, "operations": 0, "cases": 0}


def test_identical_resend_is_safe(client: httpx.Client, project: str, neo4j_driver: Driver) -> None:
    batch = demo_batch(project)
    assert client.post("/traces", json=batch).status_code == 200
    before = graph_counts(neo4j_driver, project)
    again = client.post("/traces", json=batch)
    assert again.status_code == 200
    assert again.json()["created"] == {"units": 0, "operations": 0, "cases": 0}
    assert again.json()["existing"] == {"units": 35, "operations": 16, "cases": 6}
    assert graph_counts(neo4j_driver, project) == before


def test_concurrent_resends_create_nothing_twice(
    client: httpx.Client, project: str, neo4j_driver: Driver, service: Any
) -> None:
    batch = demo_batch(project)

    def send() -> int:
        with httpx.Client(base_url=service.url, timeout=60) as c:
            return c.post("/traces", json=batch).status_code

    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        statuses = list(pool.map(lambda _: send(), range(4)))
    assert statuses == [200] * 4
    single = demo_batch("x")  # what one batch makes: nodes + edges
    expected_nodes = 35 + 16 + 6
    expected_edges = sum(len(op["inputs"]) + 2 * len(op["outputs"]) for op in single["operations"])
    expected_edges += sum(1 + len(c.get("evidence_units", [])) for c in single["cases"])
    assert graph_counts(neo4j_driver, project) == {"nodes": expected_nodes, "edges": expected_edges}


def test_schema_violations_list_every_bad_item_and_write_nothing(
    client: httpx.Client, project: str
) -> None:
    batch = demo_batch(project)
    batch["operations"][0]["kind"] = "teleport"
    batch["operations"][3]["ts"] = "not a time"
    batch["units"][1]["content"] = None
    batch["cases"][0]["verdict"] = "maybe"
    response = client.post("/traces", json=batch)
    assert response.status_code == 422
    body = response.json()
    assert body["error"] == "invalid_input"
    locations = {tuple(d["loc"]) for d in body["details"]}
    assert ("body", "operations", 0, "kind") in locations
    assert ("body", "operations", 3, "ts") in locations
    assert ("body", "units", 1, "content") in locations
    assert ("body", "cases", 0, "verdict") in locations
    assert (
        client.get(f"/cases/{batch['cases'][1]['id']}", params={"project": project}).status_code
        == 404
    )


def test_unknown_fields_and_bad_json_are_rejected(client: httpx.Client, project: str) -> None:
    batch = demo_batch(project)
    batch["operations"][0]["colour"] = "blue"
    response = client.post("/traces", json=batch)
    assert response.status_code == 422
    assert ["body", "operations", 0, "colour"] in [d["loc"] for d in response.json()["details"]]

    broken = client.post(
        "/traces", content=b'{"units": [', headers={"content-type": "application/json"}
    )
    assert broken.status_code == 422
    assert broken.json()["details"][0]["type"] == "json_invalid"

    bad_project = client.post("/traces", json={"project": "no spaces allowed"})
    assert bad_project.status_code == 422


def test_redefining_a_unit_is_a_conflict_and_writes_nothing(
    client: httpx.Client, project: str
) -> None:
    assert client.post("/traces", json=demo_batch(project)).status_code == 200
    later = {
        "project": project,
        "units": [{"id": "msg-1", "kind": "message", "content": "Alice: I adopted a cat."}],
        "operations": [
            {
                "id": "op-new",
                "name": "n",
                "kind": "other",
                "ts": "2026-06-01T00:00:00Z",
                "inputs": ["msg-1"],
                "outputs": [{"id": "u-new", "kind": "other", "content": "x"}],
            },
        ],
        "cases": [
            {
                "id": "case-new",
                "question": "q",
                "expected_answer": "a",
                "answer_unit": "u-new",
                "verdict": "failed",
            },
            {
                "id": "case-1",
                "question": "changed?",
                "expected_answer": "Denver",
                "answer_unit": "answer-1",
                "verdict": "failed",
            },
        ],
    }
    response = client.post("/traces", json=later)
    assert response.status_code == 409
    body = response.json()
    assert body["error"] == "conflict"
    assert body["details"] == [
        {"loc": ["units", "msg-1"], "msg": "already names something different"},
        {"loc": ["cases", "case-1"], "msg": "already names something different"},
    ]
    assert "msg-1" in body["message"]
    # Nothing of the batch landed: not the new operation's case, not the changed case.
    assert client.get("/cases/case-new", params={"project": project}).status_code == 404
    assert client.get("/cases/case-1", params={"project": project}).json()["question"] == (
        "Where does Alice's sister live?"
    )


def test_conflicting_definitions_inside_one_batch(client: httpx.Client, project: str) -> None:
    batch = {
        "project": project,
        "units": [
            {"id": "u1", "kind": "message", "content": "one"},
            {"id": "u1", "kind": "message", "content": "two"},
        ],
        "operations": [
            {"id": "o1", "name": "a", "kind": "other", "ts": "2026-01-01T00:00:00Z"},
            {"id": "o1", "name": "b", "kind": "other", "ts": "2026-01-01T00:00:00Z"},
        ],
    }
    response = client.post("/traces", json=batch)
    assert response.status_code == 409
    assert response.json()["details"] == [
        {"loc": ["units", "u1"], "msg": "already names something different"},
        {"loc": ["operations", "o1"], "msg": "already names something different"},
    ]


def test_units_can_be_referenced_before_they_are_defined(
    client: httpx.Client, project: str
) -> None:
    first = {
        "project": project,
        "operations": [
            {
                "id": "answer-op",
                "name": "answer",
                "kind": "response",
                "ts": "2026-01-01T00:00:00Z",
                "inputs": ["ctx"],
                "outputs": ["ans"],
            },
        ],
        "cases": [
            {
                "id": "c",
                "question": "q",
                "expected_answer": "a",
                "answer_unit": "ans",
                "verdict": "failed",
            }
        ],
    }
    assert client.post("/traces", json=first).json()["created"]["units"] == 0
    sub = client.get("/cases/c/subgraph", params={"project": project}).json()
    assert {(n["id"], n["defined"]) for n in sub["nodes"] if n["type"] == "unit"} == {
        ("ans", False),
        ("ctx", False),
    }
    second = {
        "project": project,
        "units": [
            {"id": "ctx", "kind": "context", "content": "the context"},
            {"id": "ans", "kind": "answer", "content": "the answer"},
        ],
    }
    result = client.post("/traces", json=second).json()
    assert result["created"]["units"] == 2
    sub = client.get("/cases/c/subgraph", params={"project": project}).json()
    contents = {n["id"]: n["content"] for n in sub["nodes"] if n["type"] == "unit"}
    assert contents == {"ctx": "the context", "ans": "the answer"}
    # Defined once, the units are immutable like any other.
    second["units"][0]["content"] = "another context"
    assert client.post("/traces", json=second).status_code == 409


def test_timestamps_and_attributes_round_trip(client: httpx.Client, project: str) -> None:
    batch = {
        "project": project,
        "operations": [
            {
                "id": "o",
                "name": "search",
                "kind": "retrieval",
                "ts": "2026-03-04T05:06:07+02:00",
                "system": "rag",
                "session_id": "s9",
                "inputs": [],
                "outputs": [
                    {
                        "id": "a",
                        "kind": "answer",
                        "content": "x",
                        "attributes": {"score": 0.5, "tags": ["a", "b"], "nested": {"k": 1}},
                    }
                ],
                "attributes": {"top_k": 5},
            },
        ],
        "cases": [{"id": "c", "question": "q", "expected_answer": "e", "answer_unit": "a"}],
    }
    assert client.post("/traces", json=batch).status_code == 200
    nodes = client.get("/cases/c/subgraph", params={"project": project}).json()["nodes"]
    op = next(n for n in nodes if n["type"] == "operation")
    unit = next(n for n in nodes if n["type"] == "unit")
    assert op["ts"].startswith("2026-03-04T03:06:07")  # stored in UTC
    assert (op["system"], op["session_id"], op["attributes"]) == ("rag", "s9", {"top_k": 5})
    assert unit["attributes"] == {"score": 0.5, "tags": ["a", "b"], "nested": {"k": 1}}
    case = client.get("/cases/c", params={"project": project}).json()
    assert case["verdict"] == "unknown"


def test_batch_over_the_byte_limit_is_413(client: httpx.Client, project: str) -> None:
    big = {
        "project": project,
        "units": [{"id": f"u{i}", "kind": "message", "content": "x" * 1000} for i in range(9000)],
    }
    response = client.post("/traces", json=big)
    assert response.status_code == 413
    assert response.json()["error"] == "payload_too_large"

    def chunks() -> Any:
        yield b'{"project": "%s", "units": [' % project.encode()
        for i in range(9000):
            yield b'{"id": "u%d", "kind": "message", "content": "%s"},' % (i, b"x" * 1000)
        yield b'{"id": "last", "kind": "message", "content": ""}]}'

    streamed = client.post(
        "/traces", content=chunks(), headers={"content-type": "application/json"}
    )
    assert streamed.status_code == 413
    assert client.post("/traces", json={"project": project}).json()["created"]["units"] == 0


def test_batch_over_the_operation_limit_is_413(client: httpx.Client, project: str) -> None:
    response = client.post("/traces", json=chain_batch(project, 10_001))
    assert response.status_code == 413
    assert "10001 operations" in response.json()["message"]


def test_projects_are_isolated(client: httpx.Client, project: str) -> None:
    other = project + "-other"
    assert client.post("/traces", json=demo_batch(project)).status_code == 200
    # The same ids with other content are fine in another project.
    changed = demo_batch(other)
    changed["units"][0]["content"] = "Alice: something else entirely"
    assert client.post("/traces", json=changed).json()["created"]["units"] == 35
    assert client.get("/cases/case-1", params={"project": project + "-none"}).status_code == 404
    sub = client.get("/cases/case-2/subgraph", params={"project": project}).json()
    msg = next(n for n in sub["nodes"] if n["id"] == "msg-1")
    assert msg["content"].startswith("Alice: I just adopted")
    sub_other = client.get("/cases/case-2/subgraph", params={"project": other}).json()
    assert next(n for n in sub_other["nodes"] if n["id"] == "msg-1")["content"] == (
        "Alice: something else entirely"
    )
