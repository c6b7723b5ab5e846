"""Attribution jobs: cases/s through ``/attribution-jobs`` on the LoCoMo set, heuristic judge.

Run: ``python -m benchmarks.attribution job`` (``--quick``: 2 conversations).

Two shapes of trace (``--shape``):

- ``per-conversation`` (default): the LoCoMo-derived traces (observations pipeline), one project
  per conversation; a retrieval consumes the memories it returned.
- ``whole-store``: conversations :data:`WHOLE_STORE_CONVERSATIONS` traced by the Mem0-like
  (observations: facts extracted per speaker) and the RAG-like (chunks) pipelines, all four traces
  in one project, and each retrieval consumes every memory live at question time, as a vector
  search reads the whole store. An answer's ancestry is then its whole conversation's trace.

1. A fresh Neo4j and the service on it; the traces of the chosen shape.
2. Per-request baseline: ``POST /attribute`` (refresh) for every failed case, 2 at a time, as
   ``benchmarks.attribution accuracy`` measures it.
3. Jobs one after the other: ``POST /attribution-jobs?project=P`` with ``refresh`` for each
   project, followed to completion; cases/s = failed cases / wall seconds over all projects,
   with the CPU the service and Neo4j spent per case. ``--passes N`` runs this step N times: the
   first job on a fresh Neo4j pays its warm-up, the later ones show a service that has been up.
4. Jobs all at once (one per project, started together): the same figure.
5. While jobs run, ``GET /cases?limit=1`` every 0.1 s: its latency says whether the service stays
   responsive (compared with the same request with no job running).
6. Agreement: every job result is compared with the per-request result of the same case, every
   field but timings; any difference (or any with ``--compare``) ends the run with status 1,
   after the figures are written.

Options for before/after comparisons: ``--jobs-only`` skips steps 2 and 6, ``--one-pass``
step 4; ``--service-repo DIR``
runs the service from another checkout (say, main in a worktree of its own), so the code before
and after a change is measured one right after the other on the same machine load;
``--save-results FILE`` writes every job result (keyed ``project/case``) and ``--compare FILE``
checks them field by field against such a file (``benchmarks.attribution.invariance``: only timing
fields may differ).

Figures go to ``benchmarks/results/attribution_job_<shape>.json``, one file per shape (``--name``
changes the file name).

``--processes 1,2,4 --runs 3``: instead, one job shared by 1, 2 and 4 service processes on one
Neo4j, its cases/s and CPU per case (``benchmarks.attribution.job_processes``).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import psutil

from benchmarks.attribution.invariance import (
    differences,
    fail_loudly,
    failures,
    load_results,
    save_results,
)
from benchmarks.attribution.metrics import op_correct
from benchmarks.attribution.run import (
    CaseRef,
    Dataset,
    attribute_all,
    in_project,
    ingest,
    record_of,
)
from benchmarks.datasets import load_locomo
from benchmarks.figures import percentile, save
from tests.support.servers import REPO, fresh_neo4j, run_service

COMMAND = "python -m benchmarks.attribution job"

SHAPES = ("per-conversation", "whole-store")
WHOLE_STORE_CONVERSATIONS = ("26", "41")
WHOLE_STORE_PIPELINES = ("observations", "rag")
WHOLE_STORE_PROJECT = "locomo-whole-store"


def locomo(path: str, limit: int | None, shape: str = "per-conversation") -> Dataset:
    """The traces of ``shape`` (see the module docstring); ``limit`` conversations at most."""
    if shape == "whole-store":
        chosen = list(WHOLE_STORE_CONVERSATIONS[:limit])
        batches = [
            b
            for pipeline in WHOLE_STORE_PIPELINES
            for b in load_locomo(
                path,
                conversations=chosen,
                pipeline=pipeline,
                search="whole_store",
                project=WHOLE_STORE_PROJECT,
            )
        ]
        return Dataset("locomo-whole-store", batches)
    batches = load_locomo(path, limit=limit)
    return Dataset("locomo", [in_project(b, f"locomo-{b.hidden['conversation']}") for b in batches])


INTERRUPTED_WAIT_S = 120


class Prober:
    """``GET /cases?limit=1`` every 0.1 s on a thread of its own; latencies in ms."""

    def __init__(self, url: str, project: str) -> None:
        self.url, self.project = url, project
        self.latencies: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        with httpx.Client(base_url=self.url, timeout=60) as c:
            while not self._stop.is_set():
                started = time.perf_counter()
                c.get("/cases", params={"project": self.project, "limit": 1})
                self.latencies.append((time.perf_counter() - started) * 1000)
                time.sleep(0.1)

    def __enter__(self) -> Prober:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()

    def figures(self) -> dict[str, float]:
        values = self.latencies or [0.0]
        return {
            "requests": len(self.latencies),
            "p50_ms": round(statistics.median(values), 1),
            "p95_ms": round(percentile(values, 95), 1),
            "max_ms": round(max(values), 1),
        }


class ProcessCPU:
    """CPU seconds (user + system) the service's and Neo4j's processes use over a pass: per case,
    they say where a job's time goes, and they move less with other load than wall time does."""

    def __init__(self, service_pid: int, neo4j_pid: int | None) -> None:
        self.pids = {"service": service_pid, "neo4j": neo4j_pid}
        self.marks: dict[str, float] = {}

    @staticmethod
    def _cpu_s(pid: int | None) -> float:
        if pid is None:
            return 0.0
        times = psutil.Process(pid).cpu_times()
        return float(times.user + times.system)

    def start(self) -> None:
        self.marks = {name: self._cpu_s(pid) for name, pid in self.pids.items()}

    def per_case(self, cases: int) -> dict[str, float]:
        return {
            name: round(1000 * (self._cpu_s(pid) - self.marks[name]) / max(cases, 1), 1)
            for name, pid in self.pids.items()
        }


def run_job(client: httpx.Client, project: str) -> dict[str, Any]:
    started = client.post("/attribution-jobs", params={"project": project}, json={"refresh": True})
    if started.status_code != 202:
        raise RuntimeError(f"job for {project}: {started.text[:500]}")
    return started.json()  # type: ignore[no-any-return]


def wait_all(client: httpx.Client, jobs: dict[str, str]) -> dict[str, dict[str, Any]]:
    """Poll every job (project -> id) until none is running; the jobs as they ended."""
    ended: dict[str, dict[str, Any]] = {}
    late: dict[str, float] = {}
    while len(ended) < len(jobs):
        for project, job_id in jobs.items():
            if project in ended:
                continue
            job = client.get(f"/attribution-jobs/{job_id}", params={"project": project}).json()
            # "interrupted" only says the heartbeat is late (a loaded machine): its takers may
            # still be at work, so it is waited for too, up to INTERRUPTED_WAIT_S
            if job["status"] == "interrupted":
                since = late.setdefault(project, time.monotonic())
                if time.monotonic() - since >= INTERRUPTED_WAIT_S:
                    ended[project] = job
            elif job["status"] == "running":
                late.pop(project, None)
            else:
                ended[project] = job
        time.sleep(0.1)
    return ended


def job_results(client: httpx.Client, project: str, job_id: str) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    while True:
        page = client.get(
            f"/attribution-jobs/{job_id}/results",
            params={"project": project, "skip": len(out), "limit": 1000},
        ).json()
        out.update({r["case_id"]: r for r in page})
        if len(page) < 1000:
            return out


def jobs_pass(
    client: httpx.Client, projects: list[str], together: bool
) -> tuple[float, dict[str, dict[str, Any]]]:
    """Wall seconds of attributing every project's failed cases through jobs, and the jobs."""
    started = time.perf_counter()
    ended: dict[str, dict[str, Any]] = {}
    if together:
        ids = {p: run_job(client, p)["id"] for p in projects}
        ended = wait_all(client, ids)
    else:
        for p in projects:
            ended.update(wait_all(client, {p: run_job(client, p)["id"]}))
    return time.perf_counter() - started, ended


def summary(name: str, cases: int, wall: float, jobs: dict[str, dict[str, Any]]) -> dict[str, Any]:
    failed = sum(j["failed"] for j in jobs.values())
    statuses = sorted({j["status"] for j in jobs.values()})
    row = {
        "mode": name,
        "cases": cases,
        "seconds": round(wall, 2),
        "cases_per_s": round(cases / wall, 2),
        "failed_cases": failed,
        "job_statuses": statuses,
    }
    print(f"  {name:28} {cases:5} cases {wall:7.1f} s {cases / wall:7.1f} cases/s", flush=True)
    return row


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="2 conversations (whole-store: 1)")
    parser.add_argument("--locomo", default="../shared/data/locomo10")
    parser.add_argument("--shape", choices=SHAPES, default="per-conversation")
    parser.add_argument("--jobs-only", action="store_true", help="no per-request baseline")
    parser.add_argument("--one-pass", action="store_true", help="no jobs-all-at-once pass")
    parser.add_argument(
        "--passes", type=int, default=1, help="passes of jobs one project at a time"
    )
    parser.add_argument("--service-repo", type=Path, help="run the service from this checkout")
    parser.add_argument("--save-results", type=Path, help="write every job result here")
    parser.add_argument("--compare", type=Path, help="compare job results with this file")
    parser.add_argument("--name", help="results file name (attribution_job_<shape>)")
    parser.add_argument("--neo4j-memory", default="3g", help="Neo4j heap and page cache each")
    parser.add_argument(
        "--processes",
        help="comma-separated service process counts (1,2,4): one job shared by that many "
        "processes on one Neo4j, instead of the passes above (benchmarks.attribution."
        "job_processes)",
    )
    parser.add_argument("--runs", type=int, default=3, help="jobs per process count (--processes)")
    args = parser.parse_args(argv)
    if args.processes:
        from benchmarks.attribution import job_processes  # it imports this module

        job_processes.main(args, sys.argv[1:] if argv is None else argv)
        return
    checkout = args.service_repo.resolve() if args.service_repo else REPO
    quick = (1 if args.shape == "whole-store" else 2) if args.quick else None
    dataset = locomo(str(REPO / args.locomo), quick, args.shape)
    projects = sorted({b.batch["project"] for b in dataset.batches})
    cases = dataset.cases()
    failed = sum(
        1 for b in dataset.batches for c in b.batch["cases"] if c.get("verdict") == "failed"
    )
    print(f"LoCoMo {args.shape}: {len(projects)} projects, {failed} failed cases", flush=True)
    figures: dict[str, Any] = {
        "command": " ".join([COMMAND, *(sys.argv[1:] if argv is None else argv)]),
        "shape": args.shape,
        "dataset": dataset.sizes(),
        "failed_cases": failed,
        "service_repo": str(checkout),
        "load_average_at_start": list(os.getloadavg()),
    }
    rows: list[dict[str, Any]] = []
    with (
        tempfile.TemporaryDirectory() as tmp,
        fresh_neo4j(heap=args.neo4j_memory, pagecache=args.neo4j_memory) as local,
        run_service(local.uri, Path(tmp), checkout=checkout, ready_s=300) as service,
        httpx.Client(base_url=service.url, timeout=600) as client,
    ):
        print(f"ingested in {ingest(client, dataset.batches):.1f} s", flush=True)
        with Prober(service.url, projects[0]) as idle:
            time.sleep(5)
        figures["idle_probe"] = idle.figures()

        per_request: dict[tuple[str, str], dict[str, Any]] = {}
        records: list[dict[str, Any]] = []
        if not args.jobs_only:
            records, wall = asyncio.run(
                attribute_all(service.url, "heuristic", cases, concurrency=2)
            )
            print(
                f"  {'per request (2 at a time)':28} {len(records):5} cases {wall:7.1f} s "
                f"{len(records) / wall:7.1f} cases/s",
                flush=True,
            )
            rows.append(
                {
                    "mode": "POST /attribute, 2 at a time",
                    "cases": len(records),
                    "seconds": round(wall, 2),
                    "cases_per_s": round(len(records) / wall, 2),
                }
            )
            per_request = {(r["project"], r["case_id"]): r for r in records}

        cpu = ProcessCPU(service.process.pid, local.pid())
        for n in range(args.passes):
            with Prober(service.url, projects[0]) as sequential_probe:
                cpu.start()
                wall, ended = jobs_pass(client, projects, together=False)
            name = "jobs, one project at a time" + (f" (pass {n + 1})" if args.passes > 1 else "")
            rows.append(summary(name, failed, wall, ended))
            rows[-1]["probe"] = sequential_probe.figures()
            rows[-1]["cpu_ms_per_case"] = cpu.per_case(failed)
            print(f"    CPU ms per case: {rows[-1]['cpu_ms_per_case']}", flush=True)

        if not args.one_pass:
            with Prober(service.url, projects[0]) as together_probe:
                wall, ended = jobs_pass(client, projects, together=True)
            rows.append(summary("jobs, all projects at once", failed, wall, ended))
            rows[-1]["probe"] = together_probe.figures()

        same = differ = 0
        differing: list[str] = []
        job_records = []
        full: dict[str, dict[str, Any]] = {}
        by_ref: dict[tuple[str, str], CaseRef] = {(c.project, c.case_id): c for c in cases}
        for project, job in ended.items():
            for case_id, result in job_results(client, project, job["id"]).items():
                ref = by_ref.get((project, case_id))
                if ref is None:
                    continue
                full[f"{project}/{case_id}"] = result
                job_records.append(record_of(ref, "job", result, 0.0))
                alone = per_request.get((project, case_id))
                if alone is None:
                    continue
                if _outcome(alone) == _outcome(job_records[-1]):
                    same += 1
                else:
                    differ += 1
                    differing.append(f"{project}/{case_id}")
        if records:
            figures["agreement_with_per_request"] = {"same": same, "differ": differ}
            print(f"agreement with per-request results: {same} same, {differ} differ")
        figures["op_accuracy"] = {
            "job": round(sum(map(op_correct, job_records)) / max(len(job_records), 1), 3),
        }
        if records:
            figures["op_accuracy"]["per_request"] = round(
                sum(map(op_correct, records)) / len(records), 3
            )
    if args.save_results:
        save_results(args.save_results, full)
    if args.compare:
        figures["compared_with"] = str(args.compare)
        figures["invariance"] = differences(load_results(args.compare), full)
        print(f"field by field against {args.compare}: {figures['invariance']}", flush=True)
    figures["rows"] = rows
    print(f"op accuracy: {figures['op_accuracy']}", flush=True)
    print(f"GET /cases latency idle: {figures['idle_probe']}", flush=True)
    for row in rows:
        if "probe" in row:
            print(f"  during {row['mode']}: {row['probe']}", flush=True)
    figures["load_average_at_end"] = list(os.getloadavg())
    path = save(args.name or f"attribution_job_{args.shape.replace('-', '_')}", figures)
    print(f"written to {path}")
    problems = [f"job and per-request results differ: {differ} cases, say {differing[:5]}"]
    fail_loudly(
        (problems if differ else [])
        + (failures("job results vs --compare", figures["invariance"]) if args.compare else [])
    )


def _outcome(record: dict[str, Any]) -> dict[str, Any]:
    """A result record (``run.record_of``) without what differs between two runs of the
    same code: timings and the name of the row that measured it."""
    return {k: v for k, v in record.items() if k not in ("latency", "seconds", "judge")}
