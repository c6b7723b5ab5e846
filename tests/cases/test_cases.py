"""Reading cases and ancestor subgraphs, health, and what happens when Neo4j is away."""

from __future__ import annotations

import httpx
from neo4j import Driver

from tests.support.servers import ServiceHandle
from tests.support.traces import chain_batch, demo_batch


def _ids(subgraph: dict, kind: str) -> set[str]:
    return {n["id"] for n in subgraph["nodes"] if n["type"] == kind}


def test_case_view(client: httpx.Client, project: str) -> None:
    assert client.post("/traces", json=demo_batch(project)).status_code == 200
    case = client.get("/cases/case-3", params={"project": project}).json()
    assert case == {
        "project": project,
        "id": "case-3",
        "question": "What is the name of Alice's dog?",
        "expected_answer": "Biscuit",
        "verdict": "failed",
        "answer_unit": "answer-3",
        "evidence_units": ["msg-1"],
        "attributes": {},
    }
    missing = client.get("/cases/nope", params={"project": project})
    assert missing.status_code == 404
    assert missing.json()["error"] == "not_found"


def test_the_case_list_says_enough_to_pick_a_case(client: httpx.Client, project: str) -> None:
    assert client.post("/traces", json=demo_batch(project)).status_code == 200
    params = {"project": project, "verdict": "failed"}
    assert client.post("/attribute/case-3", params={"project": project}).status_code == 200
    rows = {r["id"]: r for r in client.get("/cases", params=params).json()}
    assert len(rows) == 5
    dog = rows["case-3"]
    assert dog["question"] == "What is the name of Alice's dog?"
    assert dog["expected_answer"] == "Biscuit"
    assert dog["answer"] and dog["answered_at"] and dog["system"] and dog["session_id"]
    assert dog["attribution_status"] == "attributed" and dog["error_type"] == "DeletionError"
    assert rows["case-1"]["attribution_status"] is None
    found = client.get("/cases", params={**params, "q": "DOG"}).json()
    assert [r["id"] for r in found] == ["case-3"]


def test_subgraph_holds_exactly_the_ancestors(client: httpx.Client, project: str) -> None:
    assert client.post("/traces", json=demo_batch(project)).status_code == 200
    sub = client.get("/cases/case-1/subgraph", params={"project": project}).json()
    assert sub["truncated"] is False
    assert sub["answer_unit"] == "answer-1"
    assert _ids(sub, "operation") == {
        "op-answer-1",
        "op-search-1",
        "op-update-2",
        "op-extract-2",
        "op-update-1",
        "op-extract-1",
    }
    units = _ids(sub, "unit")
    # Other questions' queries, contexts and answers are not ancestors of this answer ...
    assert not units & {"query-2", "context-2", "answer-2", "answer-6"}
    # ... and neither is the tombstone op-update-2 produced beside the memories case-1 read.
    assert "mem-dog@tombstone" not in units
    assert {"msg-1", "msg-3", "mem-job@1", "mem-job@2", "context-1", "query-1"} <= units
    # Every edge joins two nodes of the subgraph; positions keep the operation's argument order.
    assert all(
        e["operation"] in _ids(sub, "operation") and e["unit"] in units for e in sub["edges"]
    )
    answer_inputs = sorted(
        (e["position"], e["unit"])
        for e in sub["edges"]
        if e["operation"] == "op-answer-1" and e["type"] == "CONSUMES"
    )
    assert answer_inputs == [(0, "query-1"), (1, "context-1")]
    produced = [(e["operation"], e["unit"]) for e in sub["edges"] if e["type"] == "PRODUCES"]
    assert ("op-update-2", "mem-dog@tombstone") not in produced
    assert ("op-answer-1", "answer-1") in produced


def test_subgraph_node_limit_is_reported(client: httpx.Client, project: str) -> None:
    batch = chain_batch(project, 50)
    batch["cases"] = [{"id": "c", "question": "q", "expected_answer": "a", "answer_unit": "u50"}]
    assert client.post("/traces", json=batch).status_code == 200
    full = client.get("/cases/c/subgraph", params={"project": project}).json()
    assert (len(full["nodes"]), full["truncated"]) == (101, False)
    cut = client.get("/cases/c/subgraph", params={"project": project, "limit": 10}).json()
    assert (len(cut["nodes"]), cut["node_limit"], cut["truncated"]) == (10, 10, True)
    # Breadth-first from the answer: the nearest ancestors are the ones kept.
    assert {"u50", "op49", "u49"} <= _ids(cut, "unit") | _ids(cut, "operation")
    bad = client.get("/cases/c/subgraph", params={"project": project, "limit": 0})
    assert bad.status_code == 422


# Written times as the subgraph has always shown them (stored in UTC): the read takes `ts` as
# integers now (service/neo4j_values.py: from_epoch), so these pin the text it gives back,
# down to the microsecond, at both ends of datetime's range and for a node without a time.
SHOWN_TIMES = {
    "2026-03-04T05:06:07.123456+05:30": "2026-03-03T23:36:07.123456Z",
    "2023-05-08T23:30:00.5-04:00": "2023-05-09T03:30:00.500000Z",
    "1969-12-31T23:59:59.000001Z": "1969-12-31T23:59:59.000001Z",
    "0001-01-01T00:00:00-01:00": "0001-01-01T01:00:00Z",
    "9999-12-31T23:59:59+01:00": "9999-12-31T22:59:59Z",
    "2026-01-01T00:00:00-18:03": "2026-01-01T18:03:00Z",
}


def test_subgraph_shows_each_nodes_time(client: httpx.Client, project: str) -> None:
    units = [
        {"id": f"in{i}", "kind": "message", "content": "x", "ts": ts}
        for i, ts in enumerate(SHOWN_TIMES)
    ]
    units.append({"id": "untimed", "kind": "message", "content": "x"})
    answer = {"id": "answer", "kind": "answer", "content": "a", "ts": "2026-01-01T00:00:00Z"}
    batch = {
        "project": project,
        "units": units,
        "operations": [
            {
                "id": "op",
                "name": "answer",
                "kind": "response",
                "ts": "2026-03-04T05:06:07.999999-00:30",
                "inputs": [u["id"] for u in units],
                "outputs": [answer],
            }
        ],
        "cases": [{"id": "c", "question": "q", "expected_answer": "a", "answer_unit": "answer"}],
    }
    assert client.post("/traces", json=batch).status_code == 200
    sub = client.get("/cases/c/subgraph", params={"project": project}).json()
    shown = {n["id"]: n["ts"] for n in sub["nodes"]}
    assert shown == {
        **{f"in{i}": text for i, text in enumerate(SHOWN_TIMES.values())},
        "untimed": None,
        "answer": "2026-01-01T00:00:00Z",
        "op": "2026-03-04T05:36:07.999999Z",
    }


def test_subgraph_of_a_case_without_answer_is_422(client: httpx.Client, project: str) -> None:
    batch = {
        "project": project,
        "cases": [{"id": "c", "question": "q", "expected_answer": "a", "verdict": "failed"}],
    }
    assert client.post("/traces", json=batch).status_code == 200
    response = client.get("/cases/c/subgraph", params={"project": project})
    assert response.status_code == 422
    assert "no answer_unit" in response.json()["message"]


def test_health(client: httpx.Client, neo4j_driver: Driver) -> None:
    assert client.get("/healthz").json() == {"status": "ok"}
    # store_id: the database the service writes into (memtrace demo compares it with its own).
    database = neo4j_driver.execute_query("CALL db.info() YIELD id RETURN id").records[0]["id"]
    assert client.get("/readyz").json() == {"status": "ready", "store_id": database}
    assert "/traces" in client.get("/openapi.json").json()["paths"]


def test_neo4j_unreachable_is_503_with_retry_after(down_service: ServiceHandle) -> None:
    with httpx.Client(base_url=down_service.url, timeout=30) as c:
        assert c.get("/healthz").status_code == 200
        for response in (
            c.get("/readyz"),
            c.post("/traces", json=demo_batch("p")),
            c.get("/cases/case-1/subgraph"),
        ):
            assert response.status_code == 503, response.text
            assert response.headers["retry-after"].isdigit()
            assert response.json()["error"] == "unavailable"
            assert "Traceback" not in response.text
    assert "Traceback" not in down_service.log_text()
