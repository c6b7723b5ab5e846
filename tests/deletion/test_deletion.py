"""Deleting a session (a user's deletion request), data older than a time (retention) and a
whole project, on the real Neo4j: what goes, what stays, and no orphan node left behind."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import httpx
from neo4j import Driver


def two_sessions(project: str) -> dict[str, Any]:
    """Session s1 and s2 each extract a memory; session s3 searches both and answers a case."""

    def unit(uid: str, kind: str, content: str) -> dict[str, Any]:
        return {"id": uid, "kind": kind, "content": content}

    def op(oid: str, kind: str, session: str, ts: str, inputs: list, outputs: list) -> dict:
        return {
            "id": oid,
            "name": oid.split("-")[0],
            "kind": kind,
            "session_id": session,
            "ts": ts,
            "inputs": inputs,
            "outputs": outputs,
        }

    return {
        "project": project,
        "units": [unit("msg-1", "message", "I live in Lisbon"), unit("msg-2", "message", "I swim")],
        "operations": [
            op("extract-1", "extraction", "user/s1", "2026-01-01T10:00:00Z", ["msg-1"],
               [unit("mem-1", "memory", "Lives in Lisbon")]),
            op("extract-2", "extraction", "s2", "2026-02-01T10:00:00Z", ["msg-2"],
               [unit("mem-2", "memory", "Swims")]),
            op("search-3", "retrieval", "s3", "2026-03-01T10:00:00Z",
               [unit("q-3", "query", "Where do I live?"), "mem-1", "mem-2"],
               [unit("ctx-3", "context", "Swims")]),
            op("answer-3", "response", "s3", "2026-03-01T10:00:01Z", ["q-3", "ctx-3"],
               [unit("ans-3", "answer", "I don't know")]),
        ],
        "cases": [{"id": "case-3", "question": "Where do I live?", "expected_answer": "Lisbon",
                   "answer_unit": "ans-3", "verdict": "failed", "evidence_units": ["msg-1"]}],
    }  # fmt: skip


def ids(driver: Driver, project: str) -> set[str]:
    """The project's data nodes (its kept report counts aside: they count, they are not data,
    and one back at zero stays until the project goes: ``report_counts``)."""
    rows = driver.execute_query(
        "MATCH (n {project: $p}) WHERE NOT n:ReportCount "
        "RETURN coalesce(n.id, n.case_id) AS id, labels(n)[0] AS label",
        p=project,
    ).records
    return {f"{r['label']}:{r['id']}" for r in rows}


def orphans(driver: Driver, project: str) -> int:
    """Nodes of the project nothing links to, but its kept report counts (never linked)."""
    return driver.execute_query(
        "MATCH (n {project: $p}) WHERE NOT EXISTS { (n)--() } AND NOT n:ReportCount "
        "RETURN count(n) AS n",
        p=project,
    ).records[0]["n"]


def report_counts(driver: Driver, project: str) -> int:
    """How many kept report count nodes the project has (service/reports/counts/repository.py)."""
    return driver.execute_query(
        "MATCH (n:ReportCount {project: $p}) RETURN count(n) AS n", p=project
    ).records[0]["n"]


def test_deleting_a_session_keeps_what_others_still_need(
    client: httpx.Client, neo4j_driver: Driver, project: str
) -> None:
    other = project + "-other"
    for p in (project, other):
        assert client.post("/traces", json=two_sessions(p)).status_code == 200
    params = {"project": project}
    assert client.post("/attribute/case-3", params=params).status_code == 200
    untouched = ids(neo4j_driver, other)

    first = client.delete(f"/sessions/{quote('user/s1', safe='')}", params=params)
    assert first.status_code == 200, first.text
    assert first.json() == {"operations": 1, "units": 0, "cases": 0, "attributions": 0}
    left = ids(neo4j_driver, project)
    assert "Operation:extract-1" not in left
    # mem-1 is still read by the search, msg-1 is still the case's evidence, and the case
    # stays (its answer came from session s3) with its attribution (it blamed the search).
    assert {"Unit:mem-1", "Unit:msg-1", "Case:case-3", "Attribution:case-3"} <= left
    assert orphans(neo4j_driver, project) == 0

    second = client.delete("/sessions/s3", params=params)
    # the search, the answer, the case and its attribution; then query, context, answer, the
    # memory only the search read and the message only the case named
    assert second.json() == {"operations": 2, "units": 5, "cases": 1, "attributions": 1}
    assert ids(neo4j_driver, project) == {
        "Unit:msg-2",
        "Operation:extract-2",
        "Unit:mem-2",
    }
    assert orphans(neo4j_driver, project) == 0
    again = client.delete("/sessions/s3", params=params).json()
    assert again == {"operations": 0, "units": 0, "cases": 0, "attributions": 0}
    assert ids(neo4j_driver, other) == untouched


def test_retention_deletes_what_was_recorded_before_a_time(
    client: httpx.Client, neo4j_driver: Driver, project: str
) -> None:
    assert client.post("/traces", json=two_sessions(project)).status_code == 200
    params = {"project": project, "before": "2026-02-15T00:00:00Z"}
    done = client.delete("/data", params=params)
    assert done.status_code == 200, done.text
    assert done.json()["operations"] == 2
    left = ids(neo4j_driver, project)
    assert "Operation:extract-1" not in left and "Operation:extract-2" not in left
    assert {"Unit:mem-1", "Unit:mem-2", "Case:case-3"} <= left  # the search still reads them
    assert orphans(neo4j_driver, project) == 0
    naive = client.delete("/data", params={"project": project, "before": "2026-02-15T00:00:00"})
    assert naive.status_code == 422
    assert naive.json()["details"][0]["loc"] == ["query", "before"]


def cases_without_operations(project: str) -> dict[str, Any]:
    """Cases sent with their answer and evidence units and no operation, an old and a new one,
    a message nothing refers to, and an old message a newer operation still reads."""

    def unit(uid: str, kind: str, ts: str) -> dict[str, Any]:
        return {"id": uid, "kind": kind, "content": uid, "ts": ts}

    def case(cid: str, answer: str, evidence: str) -> dict[str, Any]:
        return {
            "id": cid,
            "question": "q",
            "expected_answer": "a",
            "answer_unit": answer,
            "verdict": "failed",
            "evidence_units": [evidence],
        }

    old, new = "2026-01-01T10:00:00Z", "2026-03-01T10:00:00Z"
    return {
        "project": project,
        "units": [unit("old-msg", "message", old), unit("old-ans", "answer", old),
                  unit("new-msg", "message", new), unit("new-ans", "answer", new),
                  unit("old-alone", "message", old), unit("old-read", "message", old)],
        "operations": [{"id": "new-extract", "name": "extract", "kind": "extraction", "ts": new,
                        "inputs": ["old-read"], "outputs": [unit("new-mem", "memory", new)]}],
        "cases": [case("old-case", "old-ans", "old-msg"), case("new-case", "new-ans", "new-msg")],
    }  # fmt: skip


def test_retention_deletes_old_cases_and_units_no_operation_dates(
    client: httpx.Client, neo4j_driver: Driver, project: str
) -> None:
    assert client.post("/traces", json=cases_without_operations(project)).status_code == 200
    params = {"project": project}
    assert client.post("/attribute/old-case", params=params).status_code == 200
    done = client.delete("/data", params={**params, "before": "2026-02-01T00:00:00Z"})
    assert done.status_code == 200, done.text
    # the old case with its attribution, its answer and evidence, and the message alone
    assert done.json() == {"operations": 0, "units": 3, "cases": 1, "attributions": 1}
    assert ids(neo4j_driver, project) == {
        "Case:new-case", "Unit:new-ans", "Unit:new-msg",
        "Operation:new-extract", "Unit:new-mem", "Unit:old-read",  # the newer extraction reads it
    }  # fmt: skip
    assert orphans(neo4j_driver, project) == 0
    assert client.get("/cases/old-case", params=params).status_code == 404


def test_deleting_a_project_needs_its_name_and_removes_all_of_it(
    client: httpx.Client, neo4j_driver: Driver, project: str
) -> None:
    other = project + "-kept"
    for p in (project, other):
        assert client.post("/traces", json=two_sessions(p)).status_code == 200
    assert client.post("/attribute/case-3", params={"project": project}).status_code == 200
    wrong = client.delete("/project", params={"project": project, "confirm": other})
    assert wrong.status_code == 422 and "confirm" in wrong.json()["message"]
    assert ids(neo4j_driver, project)
    counts = report_counts(neo4j_driver, project)
    assert counts >= 1
    done = client.delete("/project", params={"project": project, "confirm": project})
    assert done.status_code == 200, done.text
    # 7 units, 4 ops, case, attribution, and the project's kept report counts
    assert done.json() == {"project": project, "nodes": 13 + counts}
    assert ids(neo4j_driver, project) == set()
    assert report_counts(neo4j_driver, project) == 0
    assert len(ids(neo4j_driver, other)) == 12


def test_a_retention_time_out_of_range_in_utc_is_a_422(client: httpx.Client, project: str) -> None:
    early = client.delete("/data", params={"project": project, "before": "0001-01-01T00:01+01:00"})
    assert early.status_code == 422, early.text
    assert early.json()["details"][0]["loc"] == ["query", "before"]
