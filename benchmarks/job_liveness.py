"""Whether attribution jobs stay visibly alive while they work, and what they cost ``/healthz``.

Run: ``python -m benchmarks.job_liveness`` (``--conversations 2`` for a shorter run).

1. A fresh Neo4j (1 GB heap, 1 GB page cache) and the service on it; LoCoMo-derived traces,
   one project per conversation.
2. ``/healthz`` every 0.05 s for 5 s with nothing else running: the idle latencies.
3. One job per project, all started together (``refresh``: every case is walked), so the one
   job worker runs them all on its loop; while they run, ``/healthz`` every 0.05 s, each job's
   status every 0.2 s (how often one was seen ``interrupted``), and in Neo4j the age of each
   running job's ``heartbeat_at`` (the oldest seen: how late the heartbeat got).

``--neo4j-uri URI`` uses a running Neo4j (fresh projects each run). ``--service-repo DIR``
runs the service from another checkout (``PYTHONPATH`` is pointed at it too), so code before
and after a change is measured one right after the other.
Figures go to ``benchmarks/results/job_liveness.json`` (``--name`` changes the file name).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
from neo4j import GraphDatabase

import tests.support.servers
from benchmarks.attr_run import in_project, ingest
from benchmarks.datasets import load_locomo
from benchmarks.harness import fresh_neo4j, percentile, save
from tests.support.servers import REPO, run_service

HEARTBEAT_AGES = """
MATCH (j:AttributionJob) WHERE j.project IN $projects AND j.status = 'running'
RETURN j.id AS id, duration.inSeconds(j.heartbeat_at, datetime()).seconds AS age_s
"""


def latency_figures(values: list[float]) -> dict[str, float]:
    values = values or [0.0]
    return {
        "requests": len(values),
        "p50_ms": round(statistics.median(values), 1),
        "p95_ms": round(percentile(values, 95), 1),
        "max_ms": round(max(values), 1),
    }


class Healthz:
    """``GET /healthz`` every 0.05 s on a thread of its own; latencies in ms."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.latencies: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        with httpx.Client(base_url=self.url, timeout=60) as c:
            while not self._stop.is_set():
                started = time.perf_counter()
                c.get("/healthz")
                self.latencies.append((time.perf_counter() - started) * 1000)
                time.sleep(0.05)

    def __enter__(self) -> Healthz:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()


def follow(
    client: httpx.Client, neo4j_uri: str, jobs: dict[str, str], timeout_s: float
) -> dict[str, Any]:
    """Poll the jobs until none is running or interrupted (or ``timeout_s``)."""
    interrupted_seen = 0
    oldest_beat = 0
    ended: dict[str, str] = {}
    deadline = time.monotonic() + timeout_s
    with GraphDatabase.driver(neo4j_uri, auth=("neo4j", "unused")) as driver:
        while len(ended) < len(jobs) and time.monotonic() < deadline:
            for project, job_id in jobs.items():
                if project in ended:
                    continue
                job = client.get(f"/attribution-jobs/{job_id}", params={"project": project})
                status = job.json()["status"]
                interrupted_seen += status == "interrupted"
                if status not in ("running", "interrupted"):
                    ended[project] = status
            records, _, _ = driver.execute_query(HEARTBEAT_AGES, projects=list(jobs))
            oldest_beat = max([oldest_beat, *(int(r["age_s"]) for r in records)])
            time.sleep(0.2)
    return {
        "statuses": sorted(ended.values()),
        "interrupted_observations": interrupted_seen,
        "oldest_heartbeat_s": oldest_beat,
    }


@contextmanager
def neo4j_at(uri: str | None) -> Iterator[str]:
    """``uri``, or a fresh local Neo4j's."""
    if uri:
        yield uri
        return
    with fresh_neo4j(heap="1g", pagecache="1g") as local:
        yield local.uri


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--locomo", default="../shared/data/locomo10")
    parser.add_argument("--conversations", type=int, default=None, help="first N (default all)")
    parser.add_argument("--pipeline", default="observations")
    parser.add_argument("--service-repo", type=Path, help="run the service from this checkout")
    parser.add_argument("--name", default="job_liveness", help="results file name")
    parser.add_argument("--neo4j-uri", help="a running Neo4j to use instead of a fresh one")
    args = parser.parse_args(argv)
    env: dict[str, str] = {}
    if args.service_repo:
        checkout = args.service_repo.resolve()
        tests.support.servers.REPO = checkout
        env["PYTHONPATH"] = f"{checkout}:{checkout}/clients/python"
    batches = load_locomo(str(REPO / args.locomo), limit=args.conversations, pipeline=args.pipeline)
    run = uuid.uuid4().hex[:6]  # projects of their own on a reused Neo4j
    items = [in_project(b, f"live-{run}-{b.hidden['conversation']}") for b in batches]
    projects = sorted({b.batch["project"] for b in items})
    failed = sum(1 for b in items for c in b.batch["cases"] if c.get("verdict") == "failed")
    print(f"LoCoMo ({args.pipeline}): {len(projects)} projects, {failed} failed cases", flush=True)
    figures: dict[str, Any] = {
        "command": "python -m benchmarks.job_liveness " + " ".join(argv or sys.argv[1:]),
        "service_repo": str(args.service_repo or REPO),
        "failed_cases": failed,
        "load_average_at_start": list(os.getloadavg()),
    }
    with (
        tempfile.TemporaryDirectory() as tmp,
        neo4j_at(args.neo4j_uri) as neo4j_uri,
        run_service(neo4j_uri, Path(tmp), **env) as service,
        httpx.Client(base_url=service.url, timeout=600) as client,
    ):
        print(f"ingested in {ingest(client, items):.1f} s", flush=True)
        with Healthz(service.url) as idle:
            time.sleep(5)
        figures["healthz_idle"] = latency_figures(idle.latencies)
        started = time.perf_counter()
        with Healthz(service.url) as busy:
            jobs = {}
            for p in projects:
                body = {"refresh": True}
                jobs[p] = client.post("/attribution-jobs", params={"project": p}, json=body).json()[
                    "id"
                ]
            figures["jobs"] = follow(client, neo4j_uri, jobs, timeout_s=900)
        wall = time.perf_counter() - started
        figures["jobs"]["seconds"] = round(wall, 1)
        figures["jobs"]["cases_per_s"] = round(failed / wall, 2)
        figures["healthz_during_jobs"] = latency_figures(busy.latencies)
    for key in ("healthz_idle", "healthz_during_jobs", "jobs"):
        print(f"  {key}: {figures[key]}", flush=True)
    save(args.name, figures)


if __name__ == "__main__":
    main()
