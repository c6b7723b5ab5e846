"""A job is work any service process takes: three processes on one Neo4j share one job, one of
them is killed (SIGKILL) while it holds chunks, and the other two finish the job without a
person. Every failed case is attributed exactly once (stored Attribution nodes counted per case
in Neo4j), every process took chunks, and the chunks the dead process held were done by
another once their leases (3 s here) expired."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from neo4j import Driver, GraphDatabase

from tests.attribution.test_attribution_job import (
    attributions_in_neo4j,
    demo_copies,
    failed_ids,
    start,
    wait_for,
)
from tests.support.servers import Neo4jHandle, local_neo4j, run_service

SHORT_LEASE = {
    "MEMTRACE_JOB_LEASE_S": "3",
    "MEMTRACE_JOB_HEARTBEAT_S": "0.5",
    # Each case burns a little CPU on its taker's loop, so that the job (300 cases) still runs
    # when one process is killed however fast the machine is.
    "MEMTRACE_JOB_CASE_SPIN_S": "0.05",
}


@pytest.fixture(scope="module")
def own_neo4j(workdir: Path) -> Iterator[Neo4jHandle]:
    """A Neo4j of this module's own: only the three processes of the test take its chunks
    (the session's service would take them from the shared one)."""
    with local_neo4j(workdir / "neo4j-processes", heap="512m", pagecache="128m") as handle:
        yield handle


def _chunks(driver: Driver, project: str, job_id: str) -> list[dict[str, Any]]:
    records, _, _ = driver.execute_query(
        "MATCH (k:JobChunk {project: $project, job_id: $job_id}) "
        "RETURN k.seq AS seq, k.holder AS holder, coalesce(k.taken_by, []) AS taken_by, "
        "k.done IS NOT NULL AS done ORDER BY k.seq",
        project=project,
        job_id=job_id,
    )
    return [dict(r) for r in records]


def _of(pid: int) -> Callable[[str], bool]:
    """Whether a holder id names a taker of the process ``pid`` (``host:pid:nonce/taker``)."""
    return lambda holder: holder.split(":")[1] == str(pid)


def _until(ready: Callable[[], bool], what: str, timeout_s: float = 180) -> None:
    """Wait until ``ready()`` (a deadline, not a timing check)."""
    deadline = time.monotonic() + timeout_s
    while not ready():
        assert time.monotonic() < deadline, f"no {what} within {timeout_s} s"
        time.sleep(0.1)


@pytest.mark.integration
@pytest.mark.timeout(900)  # a Neo4j and three services start on a loaded machine
def test_three_processes_share_a_job_and_outlive_a_kill_9(
    own_neo4j: Neo4jHandle, workdir: Path
) -> None:
    uri = own_neo4j.uri
    project = f"t-processes-{time.monotonic_ns()}"
    batch = demo_copies(project, 60, odd_first=False)
    total = len(failed_ids(batch))
    assert total == 300
    with (
        GraphDatabase.driver(uri, auth=(own_neo4j.user, own_neo4j.password)) as driver,
        run_service(uri, workdir, **SHORT_LEASE) as first,
        run_service(uri, workdir, **SHORT_LEASE) as second,
        run_service(uri, workdir, **SHORT_LEASE) as third,
        httpx.Client(base_url=second.url, timeout=60) as client,
    ):
        assert client.post("/traces", json=batch).status_code == 200
        with httpx.Client(base_url=first.url, timeout=60) as on_first:
            job = start(on_first, project).json()  # the first process takes its chunks first
        job_id = job["id"]
        pids = [s.process.pid for s in (first, second, third)]

        def took(pid: int) -> bool:
            return any(any(map(_of(pid), k["taken_by"])) for k in _chunks(driver, project, job_id))

        def held_by_first() -> set[int]:
            return {
                k["seq"]
                for k in _chunks(driver, project, job_id)
                if not k["done"] and k["holder"] and _of(pids[0])(k["holder"])
            }

        # Mid-job: all three took chunks, and the first holds some not done.
        _until(lambda: all(took(pid) for pid in pids), "chunks taken by all three processes")
        _until(lambda: bool(held_by_first()), "chunk held by the first process")
        held_at_kill = held_by_first()
        os.kill(pids[0], signal.SIGKILL)
        first.process.wait()
        assert held_at_kill, "the first process finished its chunks before the kill"

        done = wait_for(client, project, job_id, {"completed", "failed"}, timeout_s=300)
        assert (done["status"], done["total"], done["done"]) == ("completed", total, total), done
        assert (done["attributed"], done["failed"], done["skipped"]) == (total, 0, 0), done

        records, _, _ = driver.execute_query(
            "MATCH (j:AttributionJob {project: $project, id: $job_id}) "
            "RETURN j.resumed_at AS resumed_at",
            project=project,
            job_id=job_id,
        )
        assert records[0]["resumed_at"] is None  # no person resumed it
        stored = attributions_in_neo4j(driver, project)
        assert set(stored) == failed_ids(batch)
        once = {case: len(s) for case, s in stored.items() if len(s) != 1}
        assert once == {}, f"cases attributed more than once: {once}"
        assert all(s[0]["job"] == job_id for s in stored.values())

        chunks = {k["seq"]: k for k in _chunks(driver, project, job_id)}
        assert all(k["done"] for k in chunks.values())
        # The chunks the dead process held went to another once their leases expired (any:
        # one could have been stored in the instant before the kill).
        taken_over = [seq for seq in held_at_kill if not _of(pids[0])(chunks[seq]["taken_by"][-1])]
        assert taken_over, {seq: chunks[seq] for seq in held_at_kill}


@pytest.mark.integration
@pytest.mark.timeout(600)
def test_a_running_job_from_before_chunks_is_chunked_at_start_up_and_completes(
    own_neo4j: Neo4jHandle, workdir: Path
) -> None:
    """A job a service of the earlier version was running (a runner, a heartbeat, no chunks)
    when every process was restarted on this version: the first process to start gives it
    chunks and its takers finish it, without a resume."""
    uri = own_neo4j.uri
    project = f"t-old-job-{time.monotonic_ns()}"
    batch = demo_copies(project, 8, odd_first=False)
    total = len(failed_ids(batch))
    with GraphDatabase.driver(uri, auth=(own_neo4j.user, own_neo4j.password)) as driver:
        with (
            run_service(uri, workdir, MEMTRACE_JOB_POOL="0") as loader,
            httpx.Client(base_url=loader.url, timeout=60) as c,
        ):
            assert c.post("/traces", json=batch).status_code == 200
        # The job as the earlier version wrote it, its runner long dead.
        driver.execute_query(
            "CREATE (j:AttributionJob {project: $project, id: 'old', active_project: $project, "
            "status: 'running', runner: 'gone', judge: 'heuristic', refresh: false, "
            "max_llm_calls: null, created_at: datetime(), "
            "heartbeat_at: datetime() - duration('PT1H'), total: $total}) "
            "WITH j MATCH (c:Case {project: $project, verdict: 'failed'}) "
            "CREATE (j)-[:COVERS]->(c)",
            project=project,
            total=total,
        )
        with (
            run_service(uri, workdir) as service,
            httpx.Client(base_url=service.url, timeout=60) as c,
        ):
            done = wait_for(c, project, "old", {"completed", "failed"}, timeout_s=300)
        assert (done["status"], done["done"], done["attributed"]) == ("completed", total, total)
        stored = attributions_in_neo4j(driver, project)
        assert set(stored) == failed_ids(batch)
        assert all(len(s) == 1 and s[0]["job"] == "old" for s in stored.values())
        chunks = _chunks(driver, project, "old")
        assert len(chunks) == (total + 15) // 16 and all(k["done"] for k in chunks)
