"""No operation lost, none stored twice: the service stops mid-stream, the traced process ends
while it is down, the service comes back, a new process picks up the spool.

Real parts throughout: the service as a uvicorn subprocess on a fixed port (stopped with SIGTERM
and started again), the client in separate Python processes, the count taken in Neo4j.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from memtrace_client import Backoff, MemTraceClient, ServiceUnavailable, Tracer
from memtrace_client.models import VerdictIn
from neo4j import Driver

from tests.support.servers import REPO, Neo4jHandle, ServiceHandle, free_port, run_service

FIRST_RUN = 3_000
SECOND_RUN = 1_000


def stream(
    url: str, project: str, spool: Path, first: int, count: int, *extra: str
) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.support.client_stream",
            url,
            project,
            str(spool),
            str(first),
            str(count),
            *extra,
        ],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
    )


def test_outage_and_restart_store_every_operation_exactly_once(
    neo4j: Neo4jHandle, neo4j_driver: Driver, workdir: Path, project: str, tmp_path: Path
) -> None:
    port = free_port()
    spool = tmp_path / "spool"
    env = {"MEMTRACE_NEO4J_USER": neo4j.user, "MEMTRACE_NEO4J_PASSWORD": neo4j.password}

    with run_service(neo4j.uri, workdir, port=port, **env) as service:
        writer = stream(service.url, project, spool, 0, FIRST_RUN)
        assert writer.stdout is not None
        for line in writer.stdout:  # let part of the stream land, then pull the plug
            if line.startswith("recorded") and int(line.split()[1]) >= 1_000:
                break
    # The service is stopped here (SIGTERM); the process keeps recording and then exits.
    output = writer.stdout.read()
    assert writer.wait(timeout=120) == 0
    assert "recorded 3000" in output
    stored_during_outage = _count(neo4j_driver, project)
    assert 0 < stored_during_outage < FIRST_RUN
    assert list(spool.glob("slot-*/*.json")), "the unsent batches must be on disk"

    with run_service(neo4j.uri, workdir, port=port, **env) as service:
        second = stream(service.url, project, spool, FIRST_RUN, SECOND_RUN, "--flush")
        out, _ = second.communicate(timeout=300)
        assert second.returncode == 0
        assert "delivered True" in out and "pending 0" in out

    total = FIRST_RUN + SECOND_RUN
    rows = neo4j_driver.execute_query(
        "MATCH (o:Operation {project: $p}) "
        "RETURN count(o) AS ops, count(DISTINCT o.id) AS ids, "
        "sum(COUNT { (o)-[:CONSUMES]->() }) AS consumes, "
        "sum(COUNT { (o)-[:PRODUCES]->() }) AS produces",
        p=project,
    ).records[0]
    units = neo4j_driver.execute_query(
        "MATCH (u:Unit {project: $p}) RETURN count(u) AS n", p=project
    ).records[0]["n"]
    assert rows["ops"] == rows["ids"] == total
    assert rows["consumes"] == rows["produces"] == total  # no edge written twice
    assert units == 2 * total
    ids = {
        r["id"]
        for r in neo4j_driver.execute_query(
            "MATCH (o:Operation {project: $p}) RETURN o.id AS id", p=project
        ).records
    }
    assert ids == {f"op-{i}" for i in range(total)}
    assert not list(spool.glob("slot-*/*.json"))
    assert not (spool / "rejected").exists()


def _count(driver: Driver, project: str) -> int:
    record = driver.execute_query(
        "MATCH (o:Operation {project: $p}) RETURN count(o) AS n", p=project
    ).records[0]
    return int(record["n"])


SECRET = "the user's PIN is 4321"

DEAD_SERVICE_RUN = """
import sys
from memtrace_client import MemTraceClient, Tracer

tracer = Tracer(MemTraceClient(sys.argv[1], project="p", timeout_s=2), system="exit-test")
turn = tracer.message(sys.argv[2])
with tracer.operation("extract", kind="extraction", inputs=[turn]) as op:
    op.output(tracer.memory(sys.argv[2]))
print("recorded 3", flush=True)
"""  # no close(): the exit hook runs it, as in a program that just ends


def test_records_dropped_at_exit_without_a_spool_are_counted_in_a_warning(
    down_service: ServiceHandle,
) -> None:
    done = subprocess.run(
        [sys.executable, "-c", DEAD_SERVICE_RUN, down_service.url, SECRET],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "recorded 3" in done.stdout
    [warning] = [line for line in done.stderr.splitlines() if "dropped" in line]
    assert "3 record(s) in 1 batch(es)" in warning
    assert down_service.url in warning and "spool_dir" in warning
    assert SECRET not in done.stderr  # counts only, never what was recorded


def test_a_verdict_gives_up_in_its_time_when_the_service_is_down(
    down_service: ServiceHandle,
) -> None:
    tracer = Tracer(MemTraceClient(down_service.url, project="p", timeout_s=2))
    tracer.answer("Porto")
    case = tracer.case("Where do I live?", "Lisbon")
    # The case itself cannot be delivered: the verdict says so instead of waiting for it ...
    with pytest.raises(ServiceUnavailable, match=r"not recorded.*after 0.5 s"):
        case.verdict("failed", timeout_s=0.5)
    assert "/verdict" not in down_service.log_text()  # ... and sent nothing it could not back
    tracer.delivery.close(timeout_s=0.1)

    # The request alone, its retries cut by the deadline rather than by the number of attempts.
    client = MemTraceClient(
        down_service.url, project="p", attempts=1000, backoff=Backoff(base_s=0.2, max_s=0.2)
    )
    with pytest.raises(ServiceUnavailable, match=r"within 1 s after \d+ attempt") as gave_up:
        client.send_verdict(case, VerdictIn(verdict="failed"), timeout_s=1)
    tried = re.search(r"after (\d+) attempt", str(gave_up.value))
    assert tried is not None and 1 <= int(tried[1]) < 1000
