"""No operation lost, none stored twice: the service stops mid-stream, the traced process ends
while it is down, the service comes back, a new process picks up the spool.

Real parts throughout: the service as a uvicorn subprocess on a fixed port (stopped with SIGTERM
and started again), the client in separate Python processes, the count taken in Neo4j.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from neo4j import Driver

from tests.support.servers import REPO, Neo4jHandle, free_port, run_service

FIRST_RUN = 3_000
SECOND_RUN = 1_000


def stream(url: str, project: str, spool: Path, first: int, count: int, *extra: str) -> (
    subprocess.Popen[str]
):
    return subprocess.Popen(
        [sys.executable, "-m", "tests.support.client_stream", url, project, str(spool),
         str(first), str(count), *extra],
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
