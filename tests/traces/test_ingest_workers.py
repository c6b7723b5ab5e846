"""Several service processes on one graph: `memtrace serve --workers 2` beside a second service
process, all on the tests' Neo4j, receiving at once batches that overlap in ids."""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from neo4j import Driver

from tests.support.serve import memtrace_serve
from tests.support.servers import Neo4jHandle, ServiceHandle, run_service

BATCHES, SPAN, STEP = 8, 60, 30  # batch j holds operations j*STEP .. j*STEP+SPAN-1


@pytest.fixture(scope="module")
def services(neo4j: Neo4jHandle, workdir: Path) -> Iterator[list[ServiceHandle]]:
    env = {
        "MEMTRACE_NEO4J_URI": neo4j.uri,
        "MEMTRACE_NEO4J_USER": neo4j.user,
        "MEMTRACE_NEO4J_PASSWORD": neo4j.password,
        "MEMTRACE_NEO4J_RETRY_TIME_S": "5",  # the default: no test-only leniency
    }
    with (
        memtrace_serve(2, workdir, **env) as workers,
        run_service(
            neo4j.uri,
            workdir,
            MEMTRACE_NEO4J_USER=neo4j.user,
            MEMTRACE_NEO4J_PASSWORD=neo4j.password,
            MEMTRACE_NEO4J_RETRY_TIME_S="5",
        ) as single,
    ):
        yield [workers, single]


def overlapping_batch(project: str, j: int) -> dict[str, Any]:
    """Operation i consumes unit i and produces unit i + 1 (defined inline, the same in every
    batch that holds it): neighbouring batches share SPAN - STEP operations and their units, and
    each batch's first input is defined by the batch before it (a reference across batches)."""
    ops = [
        {
            "id": f"op{i}",
            "name": "step",
            "kind": "update",
            "ts": "2026-01-01T00:00:00Z",
            "inputs": [f"u{i}"],
            "outputs": [{"id": f"u{i + 1}", "kind": "memory", "content": f"v{i + 1}"}],
        }
        for i in range(j * STEP, j * STEP + SPAN)
    ]
    return {"project": project, "operations": ops}


def test_serve_runs_the_workers_it_was_asked_for(services: list[ServiceHandle]) -> None:
    log = services[0].log_text()
    assert len(set(re.findall(r"Started server process \[(\d+)\]", log))) == 2


def test_overlapping_batches_from_several_processes_store_each_id_once(
    services: list[ServiceHandle], project: str, neo4j_driver: Driver
) -> None:
    # Every batch twice, each time to another process, all released at once.
    sends = [(j, services[(j + k) % 2].url) for k in range(2) for j in range(BATCHES)]
    start = threading.Barrier(len(sends))
    answers: list[tuple[int, int, str]] = []

    def send(j: int, url: str) -> None:
        batch = overlapping_batch(project, j)
        with httpx.Client(base_url=url, timeout=120) as client:
            start.wait()
            response = client.post("/traces", json=batch)
        answers.append((j, response.status_code, response.text[:300]))

    threads = [threading.Thread(target=send, args=send_args) for send_args in sends]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert [a for a in answers if a[1] != 200] == []
    last = (BATCHES - 1) * STEP + SPAN  # operations 0 .. last - 1, units 0 .. last
    records, _, _ = neo4j_driver.execute_query(
        "MATCH (n {project: $project}) WITH labels(n)[0] AS label, n.id AS id, count(*) AS copies "
        "RETURN label, count(id) AS ids, max(copies) AS most",
        project=project,
        database_="neo4j",
    )
    by_label = {r["label"]: (r["ids"], r["most"]) for r in records}
    assert by_label == {"Operation": (last, 1), "Unit": (last + 1, 1)}
    # Units referenced across batches were filled in by the batch defining them: only u0,
    # which no batch defines, is still known by id alone.
    undefined, _, _ = neo4j_driver.execute_query(
        "MATCH (u:Unit {project: $project}) WHERE u.defined = false RETURN collect(u.id) AS ids",
        project=project,
        database_="neo4j",
    )
    assert undefined[0]["ids"] == ["u0"]
    edges, _, _ = neo4j_driver.execute_query(
        "MATCH (o:Operation {project: $project}) "
        "RETURN max(COUNT { (o)-[:CONSUMES]->() }) AS most_in, "
        "       min(COUNT { (o)-[:CONSUMES]->() }) AS least_in, "
        "       max(COUNT { (o)-[:PRODUCES]->() }) AS most_out, "
        "       min(COUNT { (o)<-[:PRODUCED_BY]-() }) AS least_back",
        project=project,
        database_="neo4j",
    )
    assert dict(edges[0]) == {"most_in": 1, "least_in": 1, "most_out": 1, "least_back": 1}
