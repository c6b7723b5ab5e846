"""An attribution job is alive while it progresses, not while a thread beats: Neo4j killed
(kill -9) and restarted under running jobs, a taker that finishes no case for longer than
``job_stall_s``. Neither may leave a job ``running`` without progress, nor wait for a person: it
goes on by itself (the taker kept trying, or its chunk's lease expired and a process took it
over), every failed case attributed exactly once."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
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
from tests.support.servers import Neo4jHandle, ServiceHandle, local_neo4j, run_service
from tests.support.traces import demo_batch


@pytest.fixture(scope="module")
def own_neo4j(workdir: Path) -> Iterator[Neo4jHandle]:
    """A Neo4j of this module's own, always the local launcher's process: the test kills it,
    which the session's Neo4j, shared by every other test, must never be."""
    with local_neo4j(workdir / "neo4j-killed", heap="512m", pagecache="128m") as handle:
        yield handle


def _kill_9(handle: Neo4jHandle) -> None:
    assert handle.local is not None
    pid = handle.local.pid()
    assert pid is not None, "the module's Neo4j is not running"
    os.kill(pid, signal.SIGKILL)
    with contextlib.suppress(ChildProcessError):  # reap it when it is our child
        os.waitpid(pid, 0)
    assert not handle.local.answers()


def _job_node(handle: Neo4jHandle, project: str, job_id: str) -> dict[str, Any]:
    with GraphDatabase.driver(handle.uri, auth=(handle.user, handle.password)) as driver:
        records, _, _ = driver.execute_query(
            "MATCH (j:AttributionJob {project: $project, id: $job_id}) "
            "RETURN j.resumed_at AS resumed_at",
            project=project,
            job_id=job_id,
        )
    return dict(records[0])


def _exactly_once(handle: Neo4jHandle, project: str, batch: dict[str, Any], job_id: str) -> None:
    with GraphDatabase.driver(handle.uri, auth=(handle.user, handle.password)) as driver:
        stored = attributions_in_neo4j(driver, project)
    assert set(stored) == failed_ids(batch)
    assert all(len(s) == 1 and s[0]["job"] == job_id for s in stored.values())


def _holds_a_chunk(driver: Driver, service: ServiceHandle) -> bool:
    """Whether a taker of ``service``'s process holds a chunk not yet done (a holder is
    ``host:pid:...``, ``service.attribution.jobs.runner.PROCESS``)."""
    records, _, _ = driver.execute_query(
        "MATCH (k:JobChunk) WHERE k.holder STARTS WITH $prefix AND k.done IS NULL "
        "AND k.free_at > datetime() RETURN count(k) AS n",
        prefix=f"{socket.gethostname()}:{service.process.pid}:",
    )
    return bool(records[0]["n"])


def _until(ready: Callable[[], bool], what: str, timeout_s: float = 120) -> None:
    """Wait until ``ready()`` (a deadline, not a timing check)."""
    deadline = time.monotonic() + timeout_s
    while not ready():
        assert time.monotonic() < deadline, f"no {what} within {timeout_s} s"
        time.sleep(0.2)


# Both services slow each case a little (CPU on the job's loop), so that their jobs are
# still running when Neo4j is killed however fast the machine is (200 cases each).
GOES_ON = {"MEMTRACE_JOB_STORE_WAIT_S": "600", "MEMTRACE_JOB_CASE_SPIN_S": "0.05"}
"""Waits for the store up to 10 min: the job goes on by itself once Neo4j is back."""
GIVES_UP = {
    "MEMTRACE_JOB_STORE_WAIT_S": "1",
    "MEMTRACE_JOB_HEARTBEAT_S": "0.5",
    "MEMTRACE_JOB_STALE_S": "3",
    "MEMTRACE_JOB_LEASE_S": "5",
    "MEMTRACE_JOB_CASE_SPIN_S": "0.05",
}
"""Gives the store 1 s: its takers let their chunks go during the outage; once Neo4j is back
their leases expire and a process takes them over, without a person."""


@pytest.mark.integration
@pytest.mark.timeout(600)  # two services and a Neo4j start, then a Neo4j restart
def test_jobs_outlive_neo4j_killed_and_restarted(own_neo4j: Neo4jHandle, workdir: Path) -> None:
    uri = own_neo4j.uri
    with (
        run_service(uri, workdir, **GOES_ON) as waits,
        run_service(uri, workdir, **GIVES_UP) as leaves,
        httpx.Client(base_url=waits.url, timeout=60) as on_waits,
        httpx.Client(base_url=leaves.url, timeout=60) as on_leaves,
    ):
        runs = {}
        for client in (on_waits, on_leaves):
            project = f"t-kill-{len(runs)}-{time.monotonic_ns()}"
            batch = demo_copies(project, 40, odd_first=False)
            assert client.post("/traces", json=batch).status_code == 200
            job = start(client, project).json()
            runs[client] = (project, batch, job["id"], len(failed_ids(batch)))
        for client, (project, _, job_id, total) in runs.items():
            seen = wait_for(client, project, job_id, {"running"})
            while seen["done"] == 0:  # mid-way: some chunks stored, most not
                seen = wait_for(client, project, job_id, {"running"})
            assert 0 < seen["done"] < total, seen
        # Killed while the second service works on a chunk (between two chunks it has none to
        # let go, only takes to try again).
        with GraphDatabase.driver(
            own_neo4j.uri, auth=(own_neo4j.user, own_neo4j.password)
        ) as driver:
            _until(lambda: _holds_a_chunk(driver, leaves), "chunk held by the second service")
            _kill_9(own_neo4j)
        # The second service's takers let their chunks go while the store is away; the
        # first's keep trying.
        gave_up = "neo4j unreachable for 1 s; chunk"
        _until(lambda: gave_up in leaves.log_text(), f"log line {gave_up!r}")
        assert own_neo4j.local is not None
        own_neo4j.local.start(180)

        # Both jobs finish by themselves: no resume.
        for client, (project, batch, job_id, total) in runs.items():
            done = wait_for(client, project, job_id, {"completed", "failed"}, timeout_s=300)
            assert (done["status"], done["done"], done["attributed"]) == ("completed", total, total)
            assert done["failed"] == 0
            assert _job_node(own_neo4j, project, job_id)["resumed_at"] is None
            _exactly_once(own_neo4j, project, batch, job_id)


STALLS = {
    "MEMTRACE_JOB_HEARTBEAT_S": "0.2",
    "MEMTRACE_JOB_STALE_S": "2",
    "MEMTRACE_JOB_STALL_S": "3",
    "MEMTRACE_JOB_LEASE_S": "5",
    # Each case holds the runner's loop for 8 s without yielding: no case finishes within
    # job_stall_s, while the heartbeat's own thread could beat all along.
    "MEMTRACE_JOB_CASE_SPIN_S": "8",
}


def test_a_taker_that_does_not_move_on_loses_its_chunk(
    service: ServiceHandle, neo4j: Neo4jHandle, workdir: Path, project: str, neo4j_driver: Driver
) -> None:
    env = {"MEMTRACE_NEO4J_USER": neo4j.user, "MEMTRACE_NEO4J_PASSWORD": neo4j.password}
    batch = demo_batch(project)
    total = len(failed_ids(batch))
    with (
        run_service(neo4j.uri, workdir, **env, **STALLS) as stalls,
        httpx.Client(base_url=stalls.url, timeout=60) as c,
    ):
        assert c.post("/traces", json=batch).status_code == 200
        job = start(c, project).json()
        stuck = wait_for(c, project, job["id"], {"interrupted", "completed"}, timeout_s=120)
        assert stuck["status"] == "interrupted" and stuck["done"] < total, stuck
        assert "has not moved on for 3 s" in stalls.log_text()
    # The stuck taker's lease is no longer renewed: once it expires, another service (the
    # session's, no slow cases) takes the chunk over and finishes the job, without a resume.
    with httpx.Client(base_url=service.url, timeout=60) as c:
        done = wait_for(c, project, job["id"], {"completed", "failed"})
    assert (done["status"], done["done"], done["failed"]) == ("completed", total, 0)
    records, _, _ = neo4j_driver.execute_query(
        "MATCH (j:AttributionJob {project: $project, id: $job_id}) RETURN j.resumed_at AS r",
        project=project,
        job_id=job["id"],
    )
    assert records[0]["r"] is None
