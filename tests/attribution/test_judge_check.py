"""``POST/GET /judge/check`` and ``memtrace judge check`` over real HTTP, against the scripted
OpenAI-compatible server: the scores follow from the probe labels, and a recorded check changes
the project's llm results (confidence, warning), in a request and in a job."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from service.attribution.confidence import RELIABLE, UNMEASURED_LLM_VERDICT
from service.attribution.judge_probes import PROBE_SET, probe_set
from service.attribution.judges.llm import unit_ids_in_prompt
from tests.support.attribution import attribute
from tests.support.cli import memtrace
from tests.support.llm_server import (
    MALFORMED,
    ScriptedLLM,
    oracle_from_ids,
    scripted_llm,
    user_text,
)
from tests.support.servers import Neo4jHandle, ServiceHandle, free_port, run_service
from tests.support.traces import demo_batch

PROBES = [u for p in probe_set() for u in p.units]
CARRIERS = {u.unit.id for u in PROBES if u.carries}
NON_CARRIERS = len(PROBES) - len(CARRIERS)
DEMO_CARRIERS = {"msg-2", "fact-2", "mem-job@1"}
"""What carries "she is a nurse" in the demo trace's case-2."""


def always_false(request: dict[str, Any]) -> str:
    ids = unit_ids_in_prompt(user_text(request))
    return json.dumps({"verdicts": dict.fromkeys(ids, False)})


def oracle(request: dict[str, Any]) -> str:
    """Right about the probes and about the demo trace's case-2."""
    return oracle_from_ids(CARRIERS | DEMO_CARRIERS)(request)


@pytest.fixture
def c(llm_service: ServiceHandle, llm: ScriptedLLM) -> Iterator[httpx.Client]:
    llm.clear_failures()
    with httpx.Client(base_url=llm_service.url, timeout=120) as client:
        yield client
    llm.script["answer"] = oracle_from_ids(set())  # type: ignore[attr-defined]


def check(
    c: httpx.Client, llm: ScriptedLLM, project: str, answer: Any, record: bool = False
) -> dict[str, Any]:
    llm.script["answer"] = answer  # type: ignore[attr-defined]
    before = len(llm.requests)
    response = c.post("/judge/check", params={"project": project}, json={"record": record})
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()
    assert result["calls"] == len(llm.requests) - before  # every HTTP attempt counted
    return result


def test_an_oracle_scores_one(c: httpx.Client, llm: ScriptedLLM, project: str) -> None:
    result = check(c, llm, project, oracle)
    assert result["probe_set"] == PROBE_SET and result["model"] == "scripted"
    assert (result["units"], result["answered"], result["correct"]) == (len(PROBES),) * 3
    assert result["accuracy"] == 1.0 and result["answered_share"] == 1.0
    assert result["malformed_share"] == 0.0 and result["failed_share"] == 0.0
    assert result["latency_median_s"] is not None and result["latency_p90_s"] is not None
    assert result["latency_median_s"] <= result["latency_p90_s"]
    assert result["input_tokens"] > 0 and result["output_tokens"] > 0
    assert not result["below_threshold"] and not result["recorded"]
    # batches of 4 units per question, every unit asked once
    asked = [unit_ids_in_prompt(p) for p in llm.prompts()[-result["calls"] :]]
    assert max(len(ids) for ids in asked) == 4
    assert sorted(i for ids in asked for i in ids) == sorted(u.unit.id for u in PROBES)
    roles = result["by_role"]
    assert roles["date-relative"]["correct"] == roles["date-relative"]["units"] == 3
    # nothing recorded
    assert c.get("/judge/check", params={"project": project}).status_code == 404


def test_a_model_saying_false_to_everything_scores_the_share_of_non_carriers(
    c: httpx.Client, llm: ScriptedLLM, project: str
) -> None:
    result = check(c, llm, project, always_false)
    assert result["answered"] == len(PROBES)
    assert result["accuracy"] == pytest.approx(NON_CARRIERS / len(PROBES))
    assert result["by_role"]["plain"]["correct"] == 0
    assert result["by_role"]["topic"]["correct"] == result["by_role"]["topic"]["units"]
    assert result["below_threshold"]


def test_malformed_answers_give_no_accuracy_at_all(
    c: httpx.Client, llm: ScriptedLLM, project: str
) -> None:
    result = check(c, llm, project, lambda request: MALFORMED)
    assert result["calls"] > 0 and result["malformed_share"] == 1.0
    assert result["failures"] == {"malformed": result["calls"]}
    assert result["answered"] == 0 and result["answered_share"] == 0.0
    assert result["accuracy"] is None  # over 0 answered units: unknown, not 0 and not 1
    assert result["below_threshold"]


def test_without_an_llm_the_check_is_the_judges_422(client: httpx.Client, project: str) -> None:
    refused = client.post("/judge/check", params={"project": project})
    assert refused.status_code == 422
    body = refused.json()
    assert body["error"] == "invalid_input" and "MEMTRACE_LLM_BASE_URL" in body["message"]
    assert (
        client.post("/judge/check", params={"project": project}, json={"records": True}).status_code
        == 422
    )  # an unknown field is named, not ignored


def _confidence_and_warning(c: httpx.Client, project: str) -> tuple[float, str | None]:
    result = attribute(c, project, "case-2", judge="llm", refresh=True).json()
    assert (result["error_type"], result["operation"]["id"]) == ("UpdateError", "op-update-2")
    assert result["judge"]["llm_verdicts"] > 0
    return result["confidence"], result["judge"]["warning"]


def test_a_recorded_check_sets_the_confidence_or_stands_the_model_down(
    c: httpx.Client, llm: ScriptedLLM, project: str
) -> None:
    llm.script["answer"] = oracle  # type: ignore[attr-defined]
    assert c.post("/traces", json=demo_batch(project)).status_code == 200
    # Never checked, the model is not trusted at an assumed accuracy: below the reliable line.
    assert _confidence_and_warning(c, project) == (UNMEASURED_LLM_VERDICT, None)
    assert UNMEASURED_LLM_VERDICT < RELIABLE

    low = check(c, llm, project, always_false, record=True)
    assert low["recorded"]
    stored = c.get("/judge/check", params={"project": project}).json()
    assert stored["accuracy"] == low["accuracy"] and stored["below_threshold"]
    assert c.get("/judge/check", params={"project": project, "model": "other"}).status_code == 404

    # Below the threshold the model is not asked: the result is the heuristic's, and says so.
    llm.script["answer"] = oracle  # type: ignore[attr-defined]
    before = len(llm.requests)
    stood_down = attribute(c, project, "case-2", judge="llm", refresh=True).json()
    assert len(llm.requests) == before
    why = (
        f"model 'scripted' scored {low['accuracy']:.2f} on judge check, below the threshold "
        "0.75 (MEMTRACE_LLM_MIN_ACCURACY)"
    )
    assert stood_down["judge"]["warning"] == (
        f"{why}: the LLM is not asked and this result rests on the heuristic judge"
    )
    # What decided is the heuristic; what was asked for, and why it was not used, are named.
    assert (stood_down["judge"]["kind"], stood_down["judge"]["requested"]) == ("heuristic", "llm")
    assert stood_down["judge"]["stood_down"] == why
    stored = c.get("/cases/case-2/attribution", params={"project": project}).json()
    assert stored["judge"] == stood_down["judge"]
    assert stood_down["judge"]["llm_calls"] == stood_down["judge"]["llm_verdicts"] == 0
    heuristic = attribute(c, project, "case-2", refresh=True).json()
    assert heuristic["judge"]["warning"] is None  # a check of an LLM says nothing about it
    for field in ("status", "error_type", "operation", "confidence", "reason", "evidence_path"):
        assert stood_down[field] == heuristic[field]

    # checked again, and well: the new outcome replaces the old
    high = check(c, llm, project, oracle, record=True)
    assert high["accuracy"] == 1.0
    confidence, warning = _confidence_and_warning(c, project)
    assert (confidence, warning) == (0.97, None)  # the walk's own misses cap a perfect score


def test_a_job_reads_the_recorded_check(c: httpx.Client, llm: ScriptedLLM, project: str) -> None:
    assert c.post("/traces", json=demo_batch(project)).status_code == 200
    check(c, llm, project, always_false, record=True)
    llm.script["answer"] = oracle  # type: ignore[attr-defined]
    job = c.post("/attribution-jobs", params={"project": project}, json={"judge": "llm-all"}).json()
    deadline = time.monotonic() + 120
    while job["status"] == "running" and time.monotonic() < deadline:
        time.sleep(0.2)
        job = c.get(f"/attribution-jobs/{job['id']}", params={"project": project}).json()
    assert job["status"] == "completed", job
    assert job["on_llm"] == 0
    results = c.get(f"/attribution-jobs/{job['id']}/results", params={"project": project}).json()
    assert results and all(
        "on judge check, below the threshold" in r["judge"]["warning"]
        and r["judge"]["llm_verdicts"] == 0
        and (r["judge"]["kind"], r["judge"]["requested"]) == ("heuristic", "llm-all")
        for r in results
    )


def test_deleting_the_project_deletes_its_check(
    c: httpx.Client, llm: ScriptedLLM, project: str
) -> None:
    check(c, llm, project, oracle, record=True)
    assert c.get("/judge/check", params={"project": project}).status_code == 200
    deleted = c.delete("/project", params={"project": project, "confirm": project})
    assert deleted.status_code == 200 and deleted.json()["nodes"] == 1
    assert c.get("/judge/check", params={"project": project}).status_code == 404


def test_the_cli_prints_and_records_the_check(
    llm_service: ServiceHandle, llm: ScriptedLLM, project: str
) -> None:
    llm.script["answer"] = always_false  # type: ignore[attr-defined]
    done = memtrace("judge", "check", "--project", project, "--record", "--url", llm_service.url)
    assert done.returncode == 0, done.stderr
    accuracy = NON_CARRIERS / len(PROBES)
    assert f"accuracy   {accuracy:.2f} ({NON_CARRIERS} of {len(PROBES)} answered" in done.stdout
    assert "answered   100% of the units" in done.stdout
    assert "malformed  0% of" in done.stdout and "latency    median" in done.stdout
    assert "below the threshold 0.75" in done.stdout and "recorded for project" in done.stdout
    as_json = memtrace("judge", "check", "--project", project, "--json", "--url", llm_service.url)
    assert as_json.returncode == 0, as_json.stderr
    assert json.loads(as_json.stdout)["recorded"] is False
    with httpx.Client(base_url=llm_service.url, timeout=30) as c:
        stored = c.get("/judge/check", params={"project": project}).json()
    assert stored["recorded"] and stored["accuracy"] == pytest.approx(accuracy)


def test_the_cli_fails_in_one_line_without_a_service() -> None:
    down = f"http://127.0.0.1:{free_port()}"
    done = memtrace("judge", "check", "--url", down)
    assert done.returncode == 1 and "Traceback" not in done.stdout + done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith(f"cannot reach the service at {down} (")


def test_the_service_checks_its_model_at_start_up_and_stands_a_weak_one_down(
    neo4j: Neo4jHandle, workdir: Path, project: str
) -> None:
    """No recorded check: the service's own check from start-up applies. A model answering
    "false" to every probe (0.53) is stood down once that check has finished."""
    with (
        scripted_llm(always_false) as weak,
        run_service(
            neo4j.uri,
            workdir,
            MEMTRACE_NEO4J_USER=neo4j.user,
            MEMTRACE_NEO4J_PASSWORD=neo4j.password,
            MEMTRACE_LLM_BASE_URL=weak.base_url,
            MEMTRACE_LLM_MODEL="weak",
        ) as service,
        httpx.Client(base_url=service.url, timeout=60) as client,
    ):
        assert client.post("/traces", json=demo_batch(project)).status_code == 200
        probes = len(PROBES)
        deadline = time.monotonic() + 120  # the check runs in the background
        result = attribute(client, project, "case-2", judge="llm", refresh=True).json()
        while "start-up" not in (result["judge"]["warning"] or ""):
            assert time.monotonic() < deadline, result["judge"]
            time.sleep(0.5)
            result = attribute(client, project, "case-2", judge="llm", refresh=True).json()
        asked = sum(len(unit_ids_in_prompt(user_text(r))) for r in weak.requests)
        assert asked >= probes  # the probe set was asked (and the earlier attributions)
        assert result["judge"]["warning"].startswith(
            "model 'weak' scored 0.53 on the judge check the service ran at start-up, below"
        )
        before = len(weak.requests)
        again = attribute(client, project, "case-2", judge="llm", refresh=True).json()
        assert len(weak.requests) == before and again["judge"]["llm_calls"] == 0
        assert (again["judge"]["kind"], again["judge"]["requested"]) == ("heuristic", "llm")
        assert again["judge"]["stood_down"].startswith("model 'weak' scored 0.53")
        heuristic = attribute(client, project, "case-2", refresh=True).json()
        for field in ("status", "error_type", "operation", "confidence", "evidence_path"):
            assert again[field] == heuristic[field]
