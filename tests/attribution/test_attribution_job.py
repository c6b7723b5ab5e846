"""Attribution jobs (``/attribution-jobs``, ``memtrace attribute --all-failed``) against the
running service and a real Neo4j: progress, skipping stored results, stop and resume, and a
service stopped mid-job (kill -9): the job is taken over and finished without a resume, every
failed case attributed exactly once, counted in Neo4j directly."""

from __future__ import annotations

import copy
import json
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from neo4j import Driver

from tests.support.cli import memtrace
from tests.support.keyed import (
    ADMIN_KEY,
    ALLOWED,
    KEYS,
    PROJECTS,
)
from tests.support.llm_server import ScriptedLLM, oracle_from_ids
from tests.support.naming import request_naming
from tests.support.servers import Neo4jHandle, ServiceHandle, run_service
from tests.support.traces import demo_batch

ODD_PREFIX = "a/b c-é-"
"""Case ids with a slash, a space and non-ASCII: a client building /attribute/{id} URLs trips
on them; the job never builds one."""


def _prefixed(prefix: str, ref: str | dict[str, Any]) -> str | dict[str, Any]:
    """A unit reference (an id, or a unit defined in place) with its ids prefixed."""
    if isinstance(ref, str):
        return prefix + ref
    ref["id"] = prefix + ref["id"]
    if "memory_id" in ref.get("attributes", {}):
        ref["attributes"]["memory_id"] = prefix + ref["attributes"]["memory_id"]
    return ref


def demo_copies(project: str, n: int, odd_first: bool = True) -> dict[str, Any]:
    """``n`` copies of the example trace in one batch (5 failed cases each), every id prefixed
    by its copy (the first with ``ODD_PREFIX`` when ``odd_first``)."""
    demo = demo_batch(project)
    batch: dict[str, Any] = {"project": project, "units": [], "operations": [], "cases": []}
    for i in range(n):
        p = ODD_PREFIX if (i == 0 and odd_first) else f"k{i:03d}-"
        for unit in copy.deepcopy(demo["units"]):
            unit["id"] = p + unit["id"]
            batch["units"].append(unit)
        for op in copy.deepcopy(demo["operations"]):
            op["id"] = p + op["id"]
            op["inputs"] = [_prefixed(p, u) for u in op["inputs"]]
            op["outputs"] = [_prefixed(p, u) for u in op["outputs"]]
            batch["operations"].append(op)
        for case in copy.deepcopy(demo["cases"]):
            case["id"] = p + case["id"]
            case["answer_unit"] = p + case["answer_unit"]
            case["evidence_units"] = [p + u for u in case.get("evidence_units", [])]
            batch["cases"].append(case)
    return batch


def failed_ids(batch: dict[str, Any]) -> set[str]:
    return {c["id"] for c in batch["cases"] if c["verdict"] == "failed"}


def wait_for(
    client: httpx.Client, project: str, job_id: str, statuses: set[str], timeout_s: float = 240
) -> dict[str, Any]:
    """Poll the job until its status is one of ``statuses`` (a deadline, not a timing check)."""
    deadline = time.monotonic() + timeout_s
    while True:
        job = client.get(f"/attribution-jobs/{job_id}", params={"project": project}).json()
        if job["status"] in statuses:
            return job
        assert time.monotonic() < deadline, f"job still {job['status']}: {job}"
        time.sleep(0.2)


def attributions_in_neo4j(driver: Driver, project: str) -> dict[str, list[dict[str, Any]]]:
    """Every stored Attribution of the project by case id: (job, created_at) of each."""
    records, _, _ = driver.execute_query(
        "MATCH (a:Attribution {project: $project}) "
        "RETURN a.case_id AS case_id, a.job AS job, a.created_at AS created_at",
        project=project,
    )
    out: dict[str, list[dict[str, Any]]] = {}
    for r in records:
        out.setdefault(r["case_id"], []).append({"job": r["job"], "created_at": r["created_at"]})
    return out


def start(client: httpx.Client, project: str, **body: Any) -> httpx.Response:
    return client.post("/attribution-jobs", params={"project": project}, json=body or None)


def test_a_job_attributes_every_failed_case_once(
    client: httpx.Client, project: str, neo4j_driver: Driver
) -> None:
    batch = demo_copies(project, 4)
    assert client.post("/traces", json=batch).status_code == 200
    started = start(client, project)
    assert started.status_code == 202, started.text
    job = started.json()
    assert (job["status"], job["total"], job["judge"]) == ("running", 20, "heuristic")

    done = wait_for(client, project, job["id"], {"completed"})
    assert (done["done"], done["attributed"], done["skipped"], done["failed"]) == (20, 20, 0, 0)
    stored = attributions_in_neo4j(neo4j_driver, project)
    assert set(stored) == failed_ids(batch)  # the odd ids too; the passed cases not
    assert all(len(s) == 1 and s[0]["job"] == job["id"] for s in stored.values())

    results = client.get(
        f"/attribution-jobs/{job['id']}/results", params={"project": project, "limit": 7}
    ).json()
    assert [r["case_id"] for r in results] == sorted(failed_ids(batch))[:7]
    listed = client.get("/attribution-jobs", params={"project": project}).json()
    assert [j["id"] for j in listed] == [job["id"]]
    # The same results as one request at a time gives.
    alone = client.post(
        "/attribute/k001-case-2", params={"project": project}, json={"refresh": True}
    ).json()
    in_job = next(r for r in results if r["case_id"] == "k001-case-2")
    for key in ("status", "error_type", "operation", "confidence", "evidence_path"):
        assert alone[key] == in_job[key], key


def test_stored_results_are_skipped_unless_refresh(
    client: httpx.Client, project: str, neo4j_driver: Driver
) -> None:
    batch = demo_copies(project, 2, odd_first=False)
    assert client.post("/traces", json=batch).status_code == 200
    first = client.post("/attribute/k001-case-4", params={"project": project}).json()

    job = wait_for(client, project, start(client, project).json()["id"], {"completed"})
    assert (job["total"], job["attributed"], job["skipped"]) == (10, 9, 1)
    kept = attributions_in_neo4j(neo4j_driver, project)["k001-case-4"]
    assert len(kept) == 1 and kept[0]["job"] is None  # the one stored by the request
    assert client.post("/attribute/k001-case-4", params={"project": project}).json() == first

    again = wait_for(
        client, project, start(client, project, refresh=True).json()["id"], {"completed"}
    )
    assert (again["attributed"], again["skipped"]) == (10, 0)
    stored = attributions_in_neo4j(neo4j_driver, project)
    assert all(len(s) == 1 and s[0]["job"] == again["id"] for s in stored.values())


def test_one_active_job_per_project_stop_and_resume(
    client: httpx.Client, project: str, neo4j_driver: Driver
) -> None:
    batch = demo_copies(project, 60)
    assert client.post("/traces", json=batch).status_code == 200
    job = start(client, project).json()
    second = start(client, project)
    assert second.status_code == 409
    assert second.json()["details"][0]["job"] == job["id"]

    stopped = client.post(f"/attribution-jobs/{job['id']}/stop", params={"project": project})
    assert stopped.status_code == 200
    assert stopped.json()["status"] == "stopped"
    time.sleep(1)  # a chunk in hand is finished; no other is taken
    paused = client.get(f"/attribution-jobs/{job['id']}", params={"project": project}).json()
    assert paused["status"] == "stopped"

    resumed = client.post(f"/attribution-jobs/{job['id']}/resume", params={"project": project})
    assert resumed.status_code == 202, resumed.text
    done = wait_for(client, project, job["id"], {"completed"})
    assert (done["done"], done["attributed"], done["total"]) == (300, 300, 300)
    stored = attributions_in_neo4j(neo4j_driver, project)
    assert set(stored) == failed_ids(batch)
    assert all(len(s) == 1 for s in stored.values())

    again = client.post(f"/attribution-jobs/{job['id']}/resume", params={"project": project})
    assert again.status_code == 409
    assert "completed" in again.json()["message"]


def test_a_job_survives_the_service_being_killed(
    neo4j: Neo4jHandle, workdir: Path, project: str, neo4j_driver: Driver
) -> None:
    env = {"MEMTRACE_NEO4J_USER": neo4j.user, "MEMTRACE_NEO4J_PASSWORD": neo4j.password}
    batch = demo_copies(project, 120)
    total = len(failed_ids(batch))
    with run_service(neo4j.uri, workdir, **env) as first:
        with httpx.Client(base_url=first.url, timeout=60) as c:
            assert c.post("/traces", json=batch).status_code == 200
            job = start(c, project).json()
            while True:  # kill it once some results are stored, before it is done
                seen = c.get(f"/attribution-jobs/{job['id']}", params={"project": project}).json()
                if seen["done"] > 0:
                    break
                time.sleep(0.05)
        first.process.kill()
        first.process.wait()
    before = attributions_in_neo4j(neo4j_driver, project)
    assert 0 < len(before) < total, "the job must be interrupted mid-way"

    with (
        run_service(neo4j.uri, workdir, **env) as second,
        httpx.Client(base_url=second.url, timeout=60) as c,
    ):
        blocked = start(c, project)  # the job still holds the project
        assert blocked.status_code == 409
        # No resume: the dead process's chunks are taken over once their leases expire (by
        # this process or the session's service, whichever takes them first).
        done = wait_for(c, project, job["id"], {"completed", "failed"}, timeout_s=300)
    assert (done["status"], done["done"], done["attributed"], done["failed"]) == (
        "completed",
        total,
        total,
        0,
    )
    records, _, _ = neo4j_driver.execute_query(
        "MATCH (j:AttributionJob {project: $project, id: $job_id}) RETURN j.resumed_at AS r",
        project=project,
        job_id=job["id"],
    )
    assert records[0]["r"] is None  # no person resumed it
    after = attributions_in_neo4j(neo4j_driver, project)
    assert set(after) == failed_ids(batch)
    assert all(len(s) == 1 and s[0]["job"] == job["id"] for s in after.values())
    # What was stored before the kill was not done again.
    assert {k: v for k, v in after.items() if k in before} == before


def test_job_errors(client: httpx.Client, project: str) -> None:
    missing = client.get("/attribution-jobs/nope", params={"project": project})
    assert missing.status_code == 404
    assert missing.json()["error"] == "not_found"
    assert (
        client.post("/attribution-jobs/nope/stop", params={"project": project}).status_code == 404
    )
    assert (
        client.post("/attribution-jobs/nope/resume", params={"project": project}).status_code == 404
    )
    llm = start(client, project, judge="llm")  # this service has no LLM endpoint
    assert llm.status_code == 422
    assert "MEMTRACE_LLM_BASE_URL" in llm.json()["message"]
    bad = start(client, project, judge="oracle")
    assert bad.status_code == 422

    assert client.post("/traces", json=demo_batch(project)).status_code == 200
    job = wait_for(client, project, start(client, project).json()["id"], {"completed"})
    other = client.get(f"/attribution-jobs/{job['id']}", params={"project": project + "x"})
    assert other.status_code == 404  # a job is seen only in its project


def test_a_project_without_failed_cases_completes_empty(client: httpx.Client, project: str) -> None:
    job = wait_for(client, project, start(client, project).json()["id"], {"completed"})
    assert (job["total"], job["done"]) == (0, 0)


def test_cli_all_failed_runs_a_job_with_progress(service: ServiceHandle, project: str) -> None:
    batch = demo_copies(project, 3)
    assert httpx.post(f"{service.url}/traces", json=batch, timeout=60).status_code == 200
    done = memtrace("attribute", "--all-failed", "--project", project, "--url", service.url)
    assert done.returncode == 0, done.stderr
    assert (
        "15 of 15 cases done: 15 attributed, 0 inconclusive, 0 unanswerable, 0 skipped, 0 failed"
        in done.stderr
    )
    assert f"{ODD_PREFIX}case-1" in done.stdout  # the table has every case, odd ids too

    as_json = memtrace(
        "attribute", "--all-failed", "--project", project, "--url", service.url, "--json"
    )
    assert as_json.returncode == 0, as_json.stderr
    results = json.loads(as_json.stdout)
    assert sorted(r["case_id"] for r in results) == sorted(failed_ids(batch))


def no_source_batch(project: str) -> dict[str, Any]:
    """A memory written with no source message (as an OTel memory write without its
    conversation gives it), retrieved and answered from, and two failed cases on the answer:
    no source message can carry what they needed, so their results are unanswerable."""
    write = {
        "id": "op-write",
        "name": "memory.add",
        "kind": "update",
        "ts": "2026-05-01T10:00:00Z",
        "inputs": [],
        "outputs": [{"id": "mem-1", "kind": "memory", "content": "Alice lives in Paris"}],
    }
    search = {
        "id": "op-search",
        "name": "memory.search",
        "kind": "retrieval",
        "ts": "2026-05-01T10:01:00Z",
        "inputs": [
            {"id": "query-1", "kind": "query", "content": "Where does Alice live?"},
            "mem-1",
        ],
        "outputs": [{"id": "context-1", "kind": "context", "content": "Alice lives in Paris"}],
    }
    answer = {
        "id": "op-answer",
        "name": "question-answering",
        "kind": "response",
        "ts": "2026-05-01T10:02:00Z",
        "inputs": ["query-1", "context-1"],
        "outputs": [{"id": "answer-1", "kind": "answer", "content": "Paris"}],
    }
    cases = [
        {
            "id": f"case-{i}",
            "question": "Where does Alice live?",
            "expected_answer": "Denver",
            "answer_unit": "answer-1",
            "verdict": "failed",
        }
        for i in (1, 2)
    ]
    return {"project": project, "units": [], "operations": [write, search, answer], "cases": cases}


def test_a_job_counts_its_results_by_status(service: ServiceHandle, project: str) -> None:
    with httpx.Client(base_url=service.url, timeout=60) as c:
        assert c.post("/traces", json=no_source_batch(project)).status_code == 200
    done = memtrace("attribute", "--all-failed", "--project", project, "--url", service.url)
    assert done.returncode == 0, done.stderr
    assert (
        "2 of 2 cases done: 0 attributed, 0 inconclusive, 2 unanswerable, 0 skipped, 0 failed"
        in done.stderr
    ), done.stderr
    with httpx.Client(base_url=service.url, timeout=60) as c:
        job = c.get("/attribution-jobs", params={"project": project}).json()[0]
        report = c.get("/report", params={"project": project}).json()["totals"]
    statuses = ("attributed", "inconclusive", "unanswerable", "not_failed")
    assert [job[k] for k in statuses] == [0, 0, 2, 0]
    assert job["done"] == 2
    # The same split as the report's totals of the project.
    assert [job[k] for k in statuses] == [report[k] for k in statuses]
    listed = memtrace("jobs", "--project", project, "--url", service.url)
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.splitlines()
    header = next(line for line in lines if "unanswerable" in line)
    row = next(line for line in lines if job["id"] in line)
    cells = dict(zip(_cells(header), _cells(row), strict=True))
    shown = ("attributed", "inconclusive", "unanswerable", "not failed", "skipped", "failed")
    assert [cells[k] for k in shown] == ["0", "0", "2", "0", "0", "0"], listed.stdout


def _cells(line: str) -> list[str]:
    """The cells of one line of a table the CLI prints."""
    return [cell.strip() for cell in line.strip().strip("│┃").split("│" if "│" in line else "┃")]


@pytest.mark.parametrize("judge", ["llm", "llm-all"])
def test_cli_reports_a_refused_job(service: ServiceHandle, project: str, judge: str) -> None:
    done = memtrace(
        "attribute", "--all-failed", "--project", project, "--url", service.url, "--judge", judge
    )
    assert done.returncode == 1
    assert "HTTP 422" in done.stderr


def test_an_llm_job_counts_the_results_that_rest_on_the_llm(
    llm_service: ServiceHandle, llm: ScriptedLLM, project: str
) -> None:
    llm.script["answer"] = oracle_from_ids({"msg-2", "fact-2", "mem-job@1"})  # type: ignore[attr-defined]
    with httpx.Client(base_url=llm_service.url, timeout=60) as c:
        assert c.post("/traces", json=demo_batch(project)).status_code == 200
    done = memtrace(
        "attribute",
        "--all-failed",
        "--project",
        project,
        "--url",
        llm_service.url,
        "--judge",
        "llm",
        "--json",
    )
    assert done.returncode == 0, done.stderr
    results = json.loads(done.stdout)
    on_llm = sum(1 for r in results if r["judge"]["llm_verdicts"] > 0)
    assert on_llm >= 1 and {r["judge"]["kind"] for r in results} == {"llm"}
    assert f"{on_llm} of the results rest on LLM verdicts" in done.stderr
    assert f"{on_llm} of {len(results)} results rest on LLM verdicts" in done.stderr


def test_cli_resumes_a_stopped_job(service: ServiceHandle, project: str) -> None:
    # 400 cases take longer than one request on any machine seen: 100 once finished first
    batch = demo_copies(project, 80, odd_first=False)
    cases = sum(1 for case in batch["cases"] if case["verdict"] == "failed")
    with httpx.Client(base_url=service.url, timeout=60) as c:
        assert c.post("/traces", json=batch).status_code == 200
        job = start(c, project).json()
        stopped = c.post(f"/attribution-jobs/{job['id']}/stop", params={"project": project})
        assert stopped.json()["status"] == "stopped"
    done = memtrace(
        "attribute", "--resume", job["id"], "--project", project, "--url", service.url, "--json"
    )
    assert done.returncode == 0, done.stderr
    assert f"job {job['id']} completed: {cases} of {cases} cases done" in done.stderr
    assert len(json.loads(done.stdout)) == cases


# --- Liveness: a busy process keeps its chunk; a resume claims a job only from a dead one ------

BUSY_STALE_S = 4.0
BUSY = {
    "MEMTRACE_JOB_HEARTBEAT_S": "0.2",
    "MEMTRACE_JOB_STALE_S": str(BUSY_STALE_S),
    # Each case holds the job worker's loop for 0.7 s of CPU without yielding; with 8 cases in
    # flight the loop is held 5.6 s at a stretch, longer than job_stale_s. (A stale window of
    # 20 beats: the heartbeat's thread and its Neo4j writes get slow on a loaded machine.)
    "MEMTRACE_JOB_CASE_SPIN_S": "0.7",
}


@pytest.fixture(scope="module")
def busy(neo4j: Neo4jHandle, workdir: Path) -> Iterator[ServiceHandle]:
    """A service whose job takers are kept busy with CPU work, on short liveness settings."""
    env = {"MEMTRACE_NEO4J_USER": neo4j.user, "MEMTRACE_NEO4J_PASSWORD": neo4j.password}
    with run_service(neo4j.uri, workdir, **env, **BUSY) as handle:
        yield handle


def _when(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def _job_node(driver: Driver, project: str, job_id: str) -> dict[str, Any]:
    """The job's status and resume time, the holders its chunks had (in order, all chunks
    together) and the takers that finished its cases."""
    records, _, _ = driver.execute_query(
        "MATCH (j:AttributionJob {project: $project, id: $job_id}) "
        "RETURN j.status AS status, j.resumed_at AS resumed_at, "
        "COLLECT { MATCH (k:JobChunk)-[:CHUNK_OF]->(j) UNWIND coalesce(k.taken_by, []) AS h "
        "          RETURN h } AS holders, "
        "COLLECT { MATCH (j)-[r:COVERS]->() WHERE r.state IS NOT NULL "
        "          RETURN DISTINCT r.runner } AS case_runners",
        project=project,
        job_id=job_id,
    )
    return dict(records[0])


def _resume_pair(url: str, project: str, job_id: str) -> list[httpx.Response]:
    """Two resumes of the job sent at once."""

    def resume(_: int) -> httpx.Response:
        with httpx.Client(base_url=url, timeout=60) as c:
            return c.post(f"/attribution-jobs/{job_id}/resume", params={"project": project})

    with ThreadPoolExecutor(2) as pool:
        return list(pool.map(resume, range(2)))


def test_a_busy_runner_stays_running(busy: ServiceHandle, project: str) -> None:
    with httpx.Client(base_url=busy.url, timeout=60) as c:
        assert c.post("/traces", json=demo_copies(project, 2)).status_code == 200
        job = start(c, project).json()
        seen: list[str] = []
        while not seen or seen[-1] in ("running", "interrupted"):
            got = c.get(f"/attribution-jobs/{job['id']}", params={"project": project}).json()
            seen.append(got["status"])
            time.sleep(0.1)
    assert set(seen) == {"running", "completed"}, sorted(set(seen))
    assert (got["done"], got["attributed"]) == (10, 10)
    # It ran longer than a silence that would have made it interrupted (store timestamps).
    ran_s = (_when(got["finished_at"]) - _when(got["created_at"])).total_seconds()
    assert ran_s > BUSY_STALE_S


def test_resumes_of_a_live_job_are_refused(
    busy: ServiceHandle, project: str, neo4j_driver: Driver
) -> None:
    with httpx.Client(base_url=busy.url, timeout=60) as c:
        assert c.post("/traces", json=demo_copies(project, 2)).status_code == 200
        job = start(c, project).json()
        refusals: list[httpx.Response] = []
        while True:  # pairs of resumes all through the job's busy life
            status = c.get(f"/attribution-jobs/{job['id']}", params={"project": project})
            if status.json()["status"] != "running":
                break
            pair = _resume_pair(busy.url, project, job["id"])
            assert [r.status_code for r in pair] == [409, 409], [r.text for r in pair]
            refusals += pair
            time.sleep(0.2)
    assert status.json()["status"] == "completed"
    assert len(refusals) >= 2
    body = refusals[0].json()
    assert body["error"] == "conflict"
    assert job["id"] in body["message"] and "last heard from" in body["message"]
    assert body["details"][0]["heartbeat_at"] in body["message"]
    stored = _job_node(neo4j_driver, project, job["id"])
    assert stored["resumed_at"] is None
    # Its one chunk was taken once (no one took it over from the busy process), and the taker
    # that took it finished every case.
    assert len(stored["holders"]) == 1, stored
    assert stored["case_runners"] == stored["holders"]


def _blocked_resumes(driver: Driver) -> int:
    records, _, _ = driver.execute_query(
        "SHOW TRANSACTIONS YIELD status, currentQuery "
        "WHERE status STARTS WITH 'Blocked' AND currentQuery CONTAINS 'AttributionJob' "
        "RETURN count(*) AS n"
    )
    return int(records[0]["n"])


def test_of_two_resumes_of_a_dead_runners_job_one_wins(
    busy: ServiceHandle, neo4j: Neo4jHandle, workdir: Path, project: str, neo4j_driver: Driver
) -> None:
    env = {"MEMTRACE_NEO4J_USER": neo4j.user, "MEMTRACE_NEO4J_PASSWORD": neo4j.password}
    with run_service(neo4j.uri, workdir, **env, **BUSY) as first:
        with httpx.Client(base_url=first.url, timeout=60) as c:
            assert c.post("/traces", json=demo_copies(project, 2)).status_code == 200
            job = start(c, project).json()
            # Killed once it holds the job's chunk (its takers take it first), mid-job.
            deadline = time.monotonic() + 60
            while not _job_node(neo4j_driver, project, job["id"])["holders"]:
                assert time.monotonic() < deadline, "the first process never took the chunk"
                time.sleep(0.05)
        first.process.kill()
        first.process.wait()
    [dead] = _job_node(neo4j_driver, project, job["id"])["holders"]

    with httpx.Client(base_url=busy.url, timeout=60) as c:
        wait_for(c, project, job["id"], {"interrupted"}, timeout_s=60)
        # Hold the job's write lock while both resumes arrive, so that they meet at it for
        # certain: each must decide only after the other's claim is visible.
        with neo4j_driver.session() as session, session.begin_transaction() as hold:
            hold.run(
                "MATCH (j:AttributionJob {project: $project, id: $job_id}) SET j.held = true",
                project=project,
                job_id=job["id"],
            ).consume()
            with ThreadPoolExecutor(1) as pool:
                pair = pool.submit(_resume_pair, busy.url, project, job["id"])
                deadline = time.monotonic() + 60
                while _blocked_resumes(neo4j_driver) < 2:
                    assert time.monotonic() < deadline, "the resumes never reached the lock"
                    time.sleep(0.05)
                hold.rollback()
                answers = pair.result()
        assert sorted(r.status_code for r in answers) == [202, 409], [r.text for r in answers]
        refused = next(r for r in answers if r.status_code == 409).json()
        assert "last heard from" in refused["message"]
        done = wait_for(c, project, job["id"], {"completed"})
    assert (done["done"], done["attributed"]) == (10, 10)
    stored = _job_node(neo4j_driver, project, job["id"])
    assert stored["resumed_at"] is not None
    # The resume freed the dead process's chunk at once (its lease had not expired): taken
    # once more, by a live taker, which finished the cases the dead one had not.
    [first_holder, winner] = stored["holders"]
    assert first_holder == dead and winner != dead
    assert set(stored["case_runners"]) <= {dead, winner}
    assert winner in stored["case_runners"]


# --- Isolation: the job endpoints x every way of naming a project x own and admin key ---------
# (tests/contract/test_isolation.py covers the other endpoints the same way; a job's id differs per
# project, so its fixed-path table cannot name these.)


def _send(url: str, method: str, path: str, key: str, naming: str, target: str) -> httpx.Response:
    body = {} if method == "POST" else None
    return request_naming(url, method, path, key, naming, target, body=body)


def _jobs_per_project(driver: Driver, projects: tuple[str, ...]) -> dict[str, int]:
    records, _, _ = driver.execute_query(
        "MATCH (j:AttributionJob) WHERE j.project IN $projects "
        "RETURN j.project AS p, count(j) AS n",
        projects=list(projects),
    )
    found = {r["p"]: r["n"] for r in records}
    return {p: found.get(p, 0) for p in projects}


def test_job_endpoints_act_on_the_authorised_project_only(
    keyed: ServiceHandle,
    neo4j_driver: Driver,
) -> None:
    admin = {"Authorization": f"Bearer {ADMIN_KEY}"}
    job_of: dict[str, str] = {}
    with httpx.Client(base_url=keyed.url, timeout=60, headers=admin) as c:
        for project in PROJECTS:
            job_of[project] = start(c, project).json()["id"]
            wait_for(c, project, job_of[project], {"completed"})

    def settle(target: str) -> None:
        with httpx.Client(base_url=keyed.url, timeout=60, headers=admin) as c:
            for job in c.get("/attribution-jobs", params={"project": target}).json():
                wait_for(c, target, job["id"], {"completed"})

    for key_name, key in sorted(KEYS.items()):
        for naming in ("query", "header", "cookie", "none"):
            for target in ["default"] if naming == "none" else list(PROJECTS):
                where = f"{key_name} naming {target} by {naming}"
                allowed = target in ALLOWED[key]
                before = _jobs_per_project(neo4j_driver, PROJECTS)
                listed = _send(keyed.url, "GET", "/attribution-jobs", key, naming, target)
                started = _send(keyed.url, "POST", "/attribution-jobs", key, naming, target)
                after = _jobs_per_project(neo4j_driver, PROJECTS)
                if not allowed:
                    assert (listed.status_code, started.status_code) == (403, 403), where
                    assert after == before, where
                    continue
                assert listed.status_code == 200, where
                assert {j["project"] for j in listed.json()} == {target}, where
                assert started.status_code == 202, f"{where}: {started.text}"
                assert started.json()["project"] == target, where
                assert after == {p: before[p] + (p == target) for p in PROJECTS}, where
                settle(target)
                for owner, job_id in job_of.items():
                    mine = owner == target
                    for method, path in (
                        ("GET", f"/attribution-jobs/{job_id}"),
                        ("GET", f"/attribution-jobs/{job_id}/results"),
                        ("POST", f"/attribution-jobs/{job_id}/stop"),
                        ("POST", f"/attribution-jobs/{job_id}/resume"),
                    ):
                        got = _send(keyed.url, method, path, key, naming, target)
                        expected = (409 if path.endswith("resume") else 200) if mine else 404
                        assert got.status_code == expected, f"{where}: {method} {path} {got.text}"
                        if got.status_code == 200 and path.endswith("results"):
                            assert got.json(), where  # the target's own results
