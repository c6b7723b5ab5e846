"""Ingest throughput of ``memtrace serve --workers N`` for N = 1, 2, 4, on one Neo4j.

Run: ``python -m benchmarks.ingest workers``. ``--senders`` clients each send their own chain of
1,000-operation batches (:func:`.throughput.chain_batches`) at once; every worker count gets the
same batches, into a project of its own on one fresh Neo4j, after an untimed warm-up; the
default order 1, 2, 4, 1 shows by its last run how much the machine's load drifted meanwhile.
Besides operations/s, the CPU seconds spent by Neo4j and by the service processes during each run
say where the machine's cores went: when Neo4j and the workers together use every core, more
workers cannot help.
Figures go to ``benchmarks/results/ingest_workers.json``.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path
from typing import Any

import psutil

from benchmarks.figures import save
from benchmarks.ingest.throughput import _send_all, chain_streams
from tests.support.serve import memtrace_serve
from tests.support.servers import fresh_neo4j


def _cpu_seconds(process: psutil.Process) -> float:
    """CPU time of ``process`` and every process below it (the uvicorn workers)."""
    total = 0.0
    for p in [process, *process.children(recursive=True)]:
        try:
            times = p.cpu_times()
            total += times.user + times.system
        except psutil.NoSuchProcess:
            pass
    return total


def one_run(
    neo4j_uri: str,
    neo4j: psutil.Process,
    workers: int,
    n_ops: int,
    senders: int,
    workdir: Path,
    project: str,
) -> dict[str, Any]:
    streams = chain_streams(project, n_ops, 1_000, senders)
    with memtrace_serve(workers, workdir, MEMTRACE_NEO4J_URI=neo4j_uri) as service:
        server = psutil.Process(service.process.pid)
        cpu_db, cpu_service = neo4j.cpu_times(), _cpu_seconds(server)
        started = time.perf_counter()
        _send_all(service.url, streams, 200)
        elapsed = time.perf_counter() - started
        after_db = neo4j.cpu_times()
        used_db = after_db.user + after_db.system - cpu_db.user - cpu_db.system
        used_service = _cpu_seconds(server) - cpu_service
    return {
        "workers": workers,
        "operations": n_ops,
        "seconds": round(elapsed, 1),
        "ops_per_s": round(n_ops / elapsed),
        "neo4j_cores_busy": round(used_db / elapsed, 2),
        "service_cores_busy": round(used_service / elapsed, 2),
        "load_average_1m": round(os.getloadavg()[0], 1),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--operations", type=int, default=24_000, help="per worker count")
    parser.add_argument("--senders", type=int, default=8)
    parser.add_argument(
        "--workers", type=int, nargs="+", default=[1, 2, 4, 1], help="in this order"
    )
    args = parser.parse_args(argv)
    runs = []
    with tempfile.TemporaryDirectory() as tmp, fresh_neo4j() as local:
        neo4j = psutil.Process(local.pid())
        # Untimed: the JVM's warm-up and the first query plans would fall on the first run only.
        one_run(local.uri, neo4j, 1, 2_000 * args.senders, args.senders, Path(tmp), "warm-up")
        for i, workers in enumerate(args.workers):
            project = f"run{i}-workers{workers}"
            run = one_run(
                local.uri, neo4j, workers, args.operations, args.senders, Path(tmp), project
            )
            print(run, flush=True)
            runs.append(run)
    figures = {"senders": args.senders, "cores": len(os.sched_getaffinity(0)), "runs": runs}
    print("written to", save("ingest_workers", figures))
