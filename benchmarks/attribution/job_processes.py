"""One attribution job shared by 1, 2, 4 ... service processes on one Neo4j: cases/s and CPU.

Run: ``python -m benchmarks.attribution job --processes 1,2,4 --runs 3`` (``--quick``: fewer
conversations; ``--shape`` as for ``job``). A fresh Neo4j; the traces of the shape, ingested
once; for each process count N, N service processes (``uvicorn``, each with its own job takers,
``job_pool`` of them) on that Neo4j, and ``--runs`` times the same job (``refresh``: every failed
case of the project with the most, attributed again) started on the first process and followed
to completion. Per run: cases/s (the job's cases / wall seconds from the POST to completed) and
the CPU milliseconds per case of all the service processes together and of Neo4j. Prints, per
N, the medians, the ratio of the median cases/s to that of 1 process (or of the smallest N run),
and the load average seen, which says how much of two cores other work took.

Figures go to ``benchmarks/results/attribution_job_processes.json`` (``--name`` changes it).
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx
import psutil

from benchmarks.attribution.job import locomo, run_job, wait_all
from benchmarks.attribution.run import ingest
from benchmarks.figures import save
from tests.support.servers import REPO, ServiceHandle, fresh_neo4j, run_service


def _cpu_s(pids: list[int]) -> float:
    """CPU seconds (user + system) the processes used so far."""
    total = 0.0
    for pid in pids:
        times = psutil.Process(pid).cpu_times()
        total += times.user + times.system
    return total


def _one_run(
    client: httpx.Client, project: str, services: list[ServiceHandle], neo4j_pid: int | None
) -> dict[str, Any]:
    service_pids = [s.process.pid for s in services]
    neo4j_pids = [neo4j_pid] if neo4j_pid is not None else []
    cpu_service, cpu_neo4j = _cpu_s(service_pids), _cpu_s(neo4j_pids)
    started = time.perf_counter()
    job = wait_all(client, {project: run_job(client, project)["id"]})[project]
    wall = time.perf_counter() - started
    cases = int(job["total"])
    return {
        "status": job["status"],
        "cases": cases,
        "failed_cases": job["failed"],
        "seconds": round(wall, 2),
        "cases_per_s": round(cases / wall, 2),
        "cpu_ms_per_case": {
            "services": round(1000 * (_cpu_s(service_pids) - cpu_service) / max(cases, 1), 1),
            "neo4j": round(1000 * (_cpu_s(neo4j_pids) - cpu_neo4j) / max(cases, 1), 1),
        },
    }


def main(args: argparse.Namespace, argv: list[str]) -> None:
    counts = sorted({int(n) for n in args.processes.split(",")})
    checkout = args.service_repo.resolve() if args.service_repo else REPO
    quick = (1 if args.shape == "whole-store" else 2) if args.quick else None
    dataset = locomo(str(REPO / args.locomo), quick, args.shape)
    failed: dict[str, int] = {}
    for b in dataset.batches:
        n = sum(1 for c in b.batch["cases"] if c.get("verdict") == "failed")
        failed[b.batch["project"]] = failed.get(b.batch["project"], 0) + n
    project = max(sorted(failed), key=lambda p: failed[p])
    print(f"LoCoMo {args.shape}: the job of {project}, {failed[project]} failed cases", flush=True)
    figures: dict[str, Any] = {
        "command": " ".join(["python -m benchmarks.attribution job", *argv]),
        "shape": args.shape,
        "project": project,
        "failed_cases": failed[project],
        "service_repo": str(checkout),
        "cpus": os.cpu_count(),
        "load_average_at_start": [round(x, 2) for x in os.getloadavg()],
    }
    rows: list[dict[str, Any]] = []
    with (
        tempfile.TemporaryDirectory() as tmp,
        fresh_neo4j(heap=args.neo4j_memory, pagecache=args.neo4j_memory) as local,
    ):
        with (
            run_service(local.uri, Path(tmp), checkout=checkout, ready_s=300) as first,
            httpx.Client(base_url=first.url, timeout=600) as client,
        ):
            print(f"ingested in {ingest(client, dataset.batches):.1f} s", flush=True)
        for n in counts:
            with ExitStack() as stack:
                services = [
                    stack.enter_context(
                        run_service(local.uri, Path(tmp), checkout=checkout, ready_s=300)
                    )
                    for _ in range(n)
                ]
                client = stack.enter_context(httpx.Client(base_url=services[0].url, timeout=600))
                load_before = os.getloadavg()[0]
                runs = [_one_run(client, project, services, local.pid()) for _ in range(args.runs)]
                load_after = os.getloadavg()[0]
            row = {
                "processes": n,
                "runs": runs,
                "median_cases_per_s": statistics.median(r["cases_per_s"] for r in runs),
                "median_cpu_ms_per_case": {
                    who: statistics.median(r["cpu_ms_per_case"][who] for r in runs)
                    for who in ("services", "neo4j")
                },
                "statuses": sorted({r["status"] for r in runs}),
                "load_average_1m": [round(load_before, 2), round(load_after, 2)],
            }
            rows.append(row)
            print(
                f"  {n} process(es): {[r['cases_per_s'] for r in runs]} cases/s, median "
                f"{row['median_cases_per_s']}; CPU ms per case {row['median_cpu_ms_per_case']}; "
                f"load {row['load_average_1m']}",
                flush=True,
            )
    base = rows[0]["median_cases_per_s"]
    for row in rows:
        row["ratio_to_fewest"] = round(row["median_cases_per_s"] / base, 2)
    figures["rows"] = rows
    figures["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    print(f"processes  median cases/s  ratio to {rows[0]['processes']}  CPU ms/case svc / neo4j")
    for row in rows:
        cpu = row["median_cpu_ms_per_case"]
        print(
            f"  {row['processes']:8} {row['median_cases_per_s']:15} {row['ratio_to_fewest']:10}  "
            f"{cpu['services']} / {cpu['neo4j']}",
            flush=True,
        )
    print(
        f"load average start {figures['load_average_at_start']}, end "
        f"{figures['load_average_at_end']}"
    )
    path = save(args.name or "attribution_job_processes", figures)
    print(f"written to {path}")
