"""Where an attribution job's time goes: the job runner in this process, under cProfile.

Run: ``python -m benchmarks.attribution profile --shape whole-store`` (``--quick``: one
conversation). A fresh Neo4j (heap and page cache 1 GB) and the service load the traces over
HTTP; then the job runner (``job_runner.run_job``, the same code the service's job thread runs,
without its heartbeat) attributes every failed case of each project here, once untimed to warm
the process (as a service that ran a job before is), then once under cProfile. Prints
the cases/s of both passes and the profile's top functions by own and by cumulative CPU time.

``--no-profile``: the timed pass without cProfile (its overhead doubles a walk's time).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import cProfile
import io
import os
import pstats
import sys
import tempfile
import threading
import time
import types
import uuid
from pathlib import Path

import httpx

from benchmarks.attribution.job import SHAPES, locomo
from benchmarks.attribution.run import ingest
from benchmarks.figures import cpu_seconds
from service.attribution.jobs import repository as jobs
from service.attribution.jobs.models import AttributionJobRequest
from service.attribution.jobs.runner import CHUNK, run_job
from service.db import Stores
from service.settings import Settings
from tests.support.servers import REPO, fresh_neo4j, run_service


async def _job(settings: Settings, project: str) -> None:
    store = Stores(settings).for_project(project)
    try:
        async with store.driver.session(database=store.database) as session:
            job_id = uuid.uuid4().hex
            request = AttributionJobRequest(judge="heuristic", refresh=True)
            await jobs.create(session, project, job_id, request, settings.job_stale_s, CHUNK, 0)
        await run_job(store, settings, project, job_id)
    finally:
        await store.driver.close()


def _cpu_s(pid: int | None) -> float:
    return 0.0 if pid is None else cpu_seconds(pid)


def _jobs(settings: Settings, projects: list[str], cases: int, neo4j_pid: int | None) -> float:
    """One job per project, one after the other; prints cases/s and the CPU seconds per case
    of this process and of Neo4j (less sensitive to a loaded machine than the wall time)."""
    started, cpu, neo4j = time.perf_counter(), time.process_time(), _cpu_s(neo4j_pid)
    for project in projects:
        asyncio.run(_job(settings, project))
    wall = time.perf_counter() - started
    cpu, neo4j = time.process_time() - cpu, _cpu_s(neo4j_pid) - neo4j
    print(
        f"  {cases} cases in {wall:.1f} s: {cases / wall:.1f} cases/s; CPU ms per case: "
        f"runner {1000 * cpu / cases:.1f}, neo4j {1000 * neo4j / cases:.1f}; "
        f"load {os.getloadavg()[0]:.1f}",
        flush=True,
    )
    return wall


class Sampler:
    """A sampling profiler (no py-spy here, and cProfile's cost per call overweights code that
    makes many small calls): every ``every_s`` a thread of its own reads the main thread's
    stack; counts per function, as the innermost frame (own) and anywhere on the stack."""

    def __init__(self, every_s: float = 0.002) -> None:
        self.every_s = every_s
        self.own: collections.Counter[str] = collections.Counter()
        self.total: collections.Counter[str] = collections.Counter()
        self.samples = 0
        self._main = threading.main_thread().ident
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(self.every_s):
            frame = sys._current_frames().get(self._main or 0)
            if frame is None:
                continue
            self.samples += 1
            self.own[_where(frame)] += 1
            seen = set()
            while frame is not None:
                seen.add(_where(frame))
                frame = frame.f_back
            self.total.update(seen)

    def __enter__(self) -> Sampler:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()

    def report(self, top: int) -> str:
        lines = [f"{self.samples} samples"]
        for name, counter in (("own", self.own), ("on the stack", self.total)):
            lines.append(f"-- {name}")
            for where, n in counter.most_common(top):
                lines.append(f"{100 * n / max(self.samples, 1):5.1f}%  {where}")
        return "\n".join(lines)


def _where(frame: types.FrameType) -> str:
    code = frame.f_code
    return f"{code.co_name} ({'/'.join(code.co_filename.split('/')[-2:])}:{code.co_firstlineno})"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--shape", choices=SHAPES, default="whole-store")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--locomo", default="../shared/data/locomo10")
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--no-profile", action="store_true")
    parser.add_argument("--sample", action="store_true", help="a sampling profile, not cProfile")
    parser.add_argument("--passes", type=int, default=1, help="timed passes")
    parser.add_argument(
        "--uri", help="a Neo4j already holding the traces (no fresh one, no ingest)"
    )
    parser.add_argument("--neo4j-pid", type=int, help="that Neo4j's process id (CPU figures)")
    args = parser.parse_args(argv)
    quick = (1 if args.shape == "whole-store" else 2) if args.quick else None
    dataset = locomo(str(REPO / args.locomo), quick, args.shape)
    projects = sorted({b.batch["project"] for b in dataset.batches})
    failed = sum(
        1 for b in dataset.batches for c in b.batch["cases"] if c.get("verdict") == "failed"
    )
    if args.uri:
        _passes(args, Settings(neo4j_uri=args.uri), projects, failed, args.neo4j_pid)
        return
    with (
        tempfile.TemporaryDirectory() as tmp,
        fresh_neo4j(heap="1g", pagecache="1g") as local,
        # the service only loads the traces: with takers of its own it would share the job's
        # chunks with the runner profiled here, and the runner would return before the job ends
        run_service(local.uri, Path(tmp), ready_s=300, MEMTRACE_JOB_POOL="0") as service,
        httpx.Client(base_url=service.url, timeout=600) as client,
    ):
        print(f"ingested in {ingest(client, dataset.batches):.1f} s", flush=True)
        _passes(args, Settings(neo4j_uri=local.uri), projects, failed, local.pid())


def _passes(
    args: argparse.Namespace,
    settings: Settings,
    projects: list[str],
    failed: int,
    neo4j_pid: int | None,
) -> None:
    print("warm-up pass", flush=True)
    _jobs(settings, projects, failed, neo4j_pid)
    for _ in range(args.passes):
        if args.no_profile:
            print("timed pass", flush=True)
            _jobs(settings, projects, failed, neo4j_pid)
            continue
        if args.sample:
            print("sampled pass", flush=True)
            with Sampler() as sampler:
                _jobs(settings, projects, failed, neo4j_pid)
            print(sampler.report(args.top), flush=True)
            continue
        print("profiled pass", flush=True)
        profile = cProfile.Profile(time.process_time)  # CPU, not wall: the machine is shared
        profile.enable()
        _jobs(settings, projects, failed, neo4j_pid)
        profile.disable()
        for order in ("tottime", "cumulative"):
            out = io.StringIO()
            pstats.Stats(profile, stream=out).sort_stats(order).print_stats(args.top)
            print(out.getvalue(), flush=True)
