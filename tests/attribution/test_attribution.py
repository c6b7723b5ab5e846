"""POST /attribute and GET /attributions against the running service and a real Neo4j."""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import pytest

from tests.support.attribution import attribute
from tests.support.llm_server import ScriptedLLM, oracle_from_ids
from tests.support.servers import Neo4jHandle, ServiceHandle, client_of_service
from tests.support.traces import DEMO_TRUTH, demo_batch


@pytest.mark.parametrize("case_id", sorted(DEMO_TRUTH))
def test_heuristic_judge_names_the_faulty_operation(
    client: httpx.Client, project: str, case_id: str
) -> None:
    assert client.post("/traces", json=demo_batch(project)).status_code == 200
    response = attribute(client, project, case_id)
    assert response.status_code == 200, response.text
    result = response.json()
    assert result["status"] == "attributed"
    assert (result["error_type"], result["operation"]["id"]) == DEMO_TRUTH[case_id]
    assert result["judge"] == {
        "kind": "heuristic",
        "model": None,
        "llm_calls": 0,
        "llm_verdicts": 0,
        "llm_failures": 0,
        "requested": None,
        "stood_down": None,
        "warning": None,
    }
    assert result["cost"]["llm_calls"] == 0
    assert result["evidence_path"][-1] == DEMO_TRUTH[case_id][1]
    assert result["searched"]["operations"] > 0
    assert 0 < result["confidence"] <= 1


def test_evidence_is_searched_when_the_case_names_none(client: httpx.Client, project: str) -> None:
    # case-1 names no evidence: the walk must find msg-3 among the source messages itself.
    assert client.post("/traces", json=demo_batch(project)).status_code == 200
    result = attribute(client, project, "case-1").json()
    assert result["evidence_path"][0] == "msg-3"
    assert result["confidence"] < 1.0  # searched evidence is less certain than given evidence


def test_results_are_stored_and_returned_again_unless_refresh(
    client: httpx.Client, project: str
) -> None:
    assert client.post("/traces", json=demo_batch(project)).status_code == 200
    first = attribute(client, project, "case-4").json()
    again = attribute(client, project, "case-4").json()
    assert again == first
    fresh = attribute(client, project, "case-4", refresh=True).json()
    assert fresh["created_at"] != first["created_at"]
    assert fresh["operation"] == first["operation"]


def test_listing_attributions_with_filters(client: httpx.Client, project: str) -> None:
    assert client.post("/traces", json=demo_batch(project)).status_code == 200
    for case_id in DEMO_TRUTH:
        assert attribute(client, project, case_id).status_code == 200
    everything = client.get("/attributions", params={"project": project}).json()
    assert {r["case_id"] for r in everything} == set(DEMO_TRUTH)
    updates = client.get(
        "/attributions",
        params={"project": project, "operation_name": "memory_system.update_memory_decision"},
    ).json()
    assert {r["case_id"] for r in updates} == {"case-2", "case-3"}
    deletions = client.get(
        "/attributions", params={"project": project, "error_type": "DeletionError"}
    ).json()
    assert [r["case_id"] for r in deletions] == ["case-3"]
    assert client.get("/attributions", params={"project": project, "system": "none"}).json() == []
    assert client.get("/attributions", params={"project": project + "x"}).json() == []
    bad = client.get("/attributions", params={"project": project, "error_type": "Oops"})
    assert bad.status_code == 422


def test_passed_case_is_not_failed(client: httpx.Client, project: str) -> None:
    assert client.post("/traces", json=demo_batch(project)).status_code == 200
    result = attribute(client, project, "case-6").json()
    assert (result["status"], result["error_type"], result["operation"]) == (
        "not_failed",
        None,
        None,
    )


def test_unknown_case_404_and_case_without_answer_422(client: httpx.Client, project: str) -> None:
    assert attribute(client, project, "nope").status_code == 404
    batch = {
        "project": project,
        "cases": [{"id": "c", "question": "q", "expected_answer": "a", "verdict": "failed"}],
    }
    assert client.post("/traces", json=batch).status_code == 200
    response = attribute(client, project, "c")
    assert response.status_code == 422
    assert "no answer_unit" in response.json()["message"]
    assert attribute(client, project, "c", judge="oracle").status_code == 422
    assert attribute(client, project, "c", max_llm_calls=-1).status_code == 422


def test_llm_judge_without_endpoint_is_a_clear_422(client: httpx.Client, project: str) -> None:
    assert client.post("/traces", json=demo_batch(project)).status_code == 200
    response = attribute(client, project, "case-4", judge="llm")
    assert response.status_code == 422
    assert "MEMTRACE_LLM_BASE_URL" in response.json()["message"]


def test_failed_cases_are_listed(client: httpx.Client, project: str) -> None:
    assert client.post("/traces", json=demo_batch(project)).status_code == 200
    failed = client.get("/cases", params={"project": project, "verdict": "failed"}).json()
    assert [c["id"] for c in failed] == ["case-1", "case-2", "case-3", "case-4", "case-5"]


def _llm_client(llm_service: ServiceHandle) -> httpx.Client:
    return httpx.Client(base_url=llm_service.url, timeout=60)


def test_llm_judge_uses_the_endpoint_within_budget(
    llm_service: ServiceHandle, llm: ScriptedLLM, project: str
) -> None:
    # The oracle knows which units carry "she is a nurse" for case-2.
    llm.script["answer"] = oracle_from_ids({"msg-2", "fact-2", "mem-job@1"})  # type: ignore[attr-defined]
    with _llm_client(llm_service) as c:
        assert c.post("/traces", json=demo_batch(project)).status_code == 200
        before = len(llm.requests)
        result = attribute(c, project, "case-2", judge="llm", max_llm_calls=6).json()
    calls = len(llm.requests) - before
    assert (result["error_type"], result["operation"]["id"]) == ("UpdateError", "op-update-2")
    assert result["status"] == "attributed"
    judge = result["judge"]
    assert (judge["kind"], judge["model"], judge["warning"]) == ("llm", "scripted", None)
    assert judge["llm_calls"] == result["cost"]["llm_calls"] and judge["llm_failures"] == 0
    assert judge["llm_verdicts"] > 0
    # The service asks the LLM about every unit (MEMTRACE_LLM_HEURISTIC_CONFIDENCE=1.01).
    assert 1 <= result["cost"]["llm_calls"] == calls <= 6
    assert result["cost"]["input_tokens"] > 0
    assert any("nurse" in prompt for prompt in llm.prompts()[before:])


def test_llm_judge_budget_holds_when_the_endpoint_fails(
    llm_service: ServiceHandle, llm: ScriptedLLM, project: str
) -> None:
    llm.script["answer"] = oracle_from_ids(set())  # type: ignore[attr-defined]
    llm.push_failure("500", times=20)
    with _llm_client(llm_service) as c:
        assert c.post("/traces", json=demo_batch(project)).status_code == 200
        before = len(llm.requests)
        response = attribute(c, project, "case-1", judge="llm", max_llm_calls=2)
    assert response.status_code == 200
    assert 1 <= len(llm.requests) - before <= 2
    result = response.json()
    assert result["cost"]["llm_calls"] == len(llm.requests) - before
    llm.clear_failures()
    # Nothing came from the LLM: the result says it is the heuristic's, and it is.
    judge = result["judge"]
    assert judge["llm_verdicts"] == 0 and judge["llm_failures"] == judge["llm_calls"] >= 1
    assert "rests on the heuristic judge" in judge["warning"]
    with _llm_client(llm_service) as c:
        heuristic = attribute(c, project, "case-1", judge="heuristic", refresh=True).json()
    for field in ("status", "error_type", "operation", "confidence", "evidence_path"):
        assert result[field] == heuristic[field]


def test_llm_all_judge_is_named_and_asks_the_llm(
    llm_service: ServiceHandle, llm: ScriptedLLM, project: str
) -> None:
    llm.script["answer"] = oracle_from_ids({"msg-2", "fact-2", "mem-job@1"})  # type: ignore[attr-defined]
    with _llm_client(llm_service) as c:
        assert c.post("/traces", json=demo_batch(project)).status_code == 200
        result = attribute(c, project, "case-2", judge="llm-all").json()
    assert (result["error_type"], result["operation"]["id"]) == ("UpdateError", "op-update-2")
    assert result["judge"]["kind"] == "llm-all" and result["judge"]["llm_verdicts"] > 0


def test_a_refused_endpoint_is_an_error_and_readyz_names_it(
    llm_service: ServiceHandle, llm: ScriptedLLM, project: str
) -> None:
    llm.script["answer"] = oracle_from_ids(set())  # type: ignore[attr-defined]
    with _llm_client(llm_service) as c:
        assert c.post("/traces", json=demo_batch(project)).status_code == 200
        assert c.get("/readyz").status_code == 200
        llm.push_failure("404")
        refused = attribute(c, project, "case-1", judge="llm")
        assert refused.status_code == 502
        assert refused.json()["error"] == "llm_endpoint_refused"
        assert "MEMTRACE_LLM_MODEL" in refused.json()["message"]
        ready = c.get("/readyz")
        assert ready.status_code == 503 and ready.json()["error"] == "llm_endpoint_refused"
        assert llm.base_url in ready.json()["message"]
        # Its next answer clears it.
        assert attribute(c, project, "case-1", judge="llm").status_code == 200
        assert c.get("/readyz").status_code == 200


def test_evidence_search_fuses_endpoint_embeddings(
    llm_service: ServiceHandle, llm: ScriptedLLM, project: str
) -> None:
    batch = demo_batch(project)
    case = next(c for c in batch["cases"] if c["id"] == "case-1")  # names no evidence
    case["question"] = f"Where does Alice's sister live ({project})?"  # a query not yet cached
    before = len(llm.embedding_requests)
    with _llm_client(llm_service) as c:
        assert c.post("/traces", json=batch).status_code == 200
        result = attribute(c, project, "case-1").json()
    assert (result["error_type"], result["operation"]["id"]) == ("ExtractionError", "op-extract-1")
    assert result["evidence_path"][0] == "msg-3"
    sent = llm.embedding_requests[before:]
    assert sent and all(r["model"] == "scripted-embeddings" for r in sent)
    assert any(project in text for r in sent for text in r["input"])  # the query
    # Messages are embedded once per process (cached by text), by this test or an earlier one.
    embedded = [text for r in llm.embedding_requests for text in r["input"]]
    assert any("lives in Denver" in text for text in embedded)


def test_a_wrong_llm_url_is_named_by_readyz_from_the_start(
    neo4j: Neo4jHandle, workdir: Path, llm: ScriptedLLM
) -> None:
    wrong = llm.base_url.removesuffix("/v1") + "/nowhere/v1"  # the server answers 404 there
    with client_of_service(
        neo4j, workdir, MEMTRACE_LLM_BASE_URL=wrong, MEMTRACE_LLM_MODEL="scripted"
    ) as c:
        deadline = time.monotonic() + 20  # the start-up probe runs in the background
        ready = c.get("/readyz")
        while ready.status_code == 200 and time.monotonic() < deadline:
            time.sleep(0.2)
            ready = c.get("/readyz")
        assert ready.status_code == 503
        assert ready.json()["error"] == "llm_endpoint_refused" and wrong in ready.json()["message"]
