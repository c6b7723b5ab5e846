"""Attribution before and after a change, in one run on one Neo4j: cases/s of each under the
same machine load, and their results field by field.

Run: ``python -m benchmarks.attribution before-after --before DIR`` where ``DIR`` is a checkout
of the code before the change (say ``git worktree add --detach ../before main``); the code after
is this checkout. ``--quick``: fewer conversations.

One Neo4j holds the traces of every shape in ``--shapes`` (``benchmarks.attribution job``
describes them: LoCoMo per conversation, and the whole-store shape whose retrievals consume every
memory). Two services run on it, one from each checkout. Then, ``--rounds`` times and per shape,
every project's job (``refresh``) runs on the "before" service and then on the "after" service,
one project at a time as ``benchmarks.attribution job`` does, and (unless ``--jobs-only``) every
failed case is attributed by ``POST /attribute`` (refresh), ``--concurrency`` at a time, on each;
alternating spreads a change in machine load over both. The job results of the last round are
compared (``benchmarks.attribution.invariance``: only timing fields may differ), and so are the
``POST /attribute`` results of the last round; any difference ends the run with status 1, after
the figures are written. Figures go to ``benchmarks/results/attribution_before_after.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx

from benchmarks.attribution.invariance import differences, fail_loudly, failures
from benchmarks.attribution.job import SHAPES, job_results, jobs_pass, locomo
from benchmarks.attribution.run import attribute_all, ingest
from benchmarks.figures import save
from tests.support.servers import REPO, fresh_neo4j, run_service

COMMAND = "python -m benchmarks.attribution before-after"
CODES = ("before", "after")
START_S = 300
"""How long a service may take to start: minutes on a machine others load."""


def all_results(client: httpx.Client, ended: dict[str, dict[str, Any]]) -> dict[str, Any]:
    return {
        f"{project}/{case}": result
        for project, job in ended.items()
        for case, result in job_results(client, project, job["id"]).items()
    }


def _record_fields(record: dict[str, Any]) -> dict[str, Any]:
    """A ``POST /attribute`` record (``run.record_of``) without its timings."""
    return {k: v for k, v in record.items() if k not in ("latency", "seconds")}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--before", type=Path, required=True, help="checkout before the change")
    parser.add_argument("--quick", action="store_true", help="fewer conversations")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--shapes", nargs="+", choices=SHAPES, default=list(SHAPES))
    parser.add_argument("--jobs-only", action="store_true", help="no POST /attribute passes")
    parser.add_argument("--concurrency", type=int, default=1, help="POST /attribute at a time")
    parser.add_argument("--locomo", default="../shared/data/locomo10")
    args = parser.parse_args(argv)
    datasets = {
        shape: locomo(
            str(REPO / args.locomo),
            ((1 if shape == "whole-store" else 2) if args.quick else None),
            shape,
        )
        for shape in args.shapes
    }
    figures: dict[str, Any] = {
        "command": " ".join([COMMAND, *(sys.argv[1:] if argv is None else argv)]),
        "before": str(args.before.resolve()),
        "after": str(REPO),
        "load_average_at_start": list(os.getloadavg()),
    }
    rows: list[dict[str, Any]] = []
    # (shape, mode, code) -> wall seconds over all rounds
    seconds: dict[tuple[str, str, str], float] = {}
    results: dict[str, dict[str, dict[str, Any]]] = {}
    requests: dict[str, dict[str, dict[str, Any]]] = {}  # the last round's, as records
    # the traces are a few thousand nodes: a small Neo4j holds them (the machine is shared)
    with (
        tempfile.TemporaryDirectory() as tmp,
        fresh_neo4j(heap="1g", pagecache="1g") as local,
        ExitStack() as stack,
    ):
        after = stack.enter_context(run_service(local.uri, Path(tmp), ready_s=START_S))
        before = stack.enter_context(
            run_service(local.uri, Path(tmp), checkout=args.before.resolve(), ready_s=START_S)
        )
        urls = {"before": before.url, "after": after.url}
        with httpx.Client(base_url=after.url, timeout=600) as client:
            for dataset in datasets.values():
                print(f"ingested in {ingest(client, dataset.batches):.1f} s", flush=True)

        def measured(
            shape: str, mode: str, code: str, round_: int, cases: int, wall: float
        ) -> None:
            key = (shape, mode, code)
            seconds[key] = seconds.get(key, 0.0) + wall
            load = list(os.getloadavg())
            rows.append(
                {
                    "shape": shape,
                    "mode": mode,
                    "round": round_,
                    "code": code,
                    "cases": cases,
                    "seconds": round(wall, 2),
                    "cases_per_s": round(cases / wall, 2),
                    "load_average": load,
                }
            )
            print(
                f"  {shape:16} {mode:8} {code:6} round {round_}: {cases} cases {wall:6.1f} s "
                f"{cases / wall:6.1f} cases/s (load {load[0]:.1f})",
                flush=True,
            )
            figures["rows"] = rows
            save("attribution_before_after", figures)  # so far, should the run be cut short

        for round_ in range(args.rounds):
            for shape, dataset in datasets.items():
                projects = sorted({b.batch["project"] for b in dataset.batches})
                cases = dataset.cases()
                for code in CODES:
                    with httpx.Client(base_url=urls[code], timeout=600) as client:
                        wall, ended = jobs_pass(client, projects, together=False)
                        statuses = sorted({j["status"] for j in ended.values()})
                        if statuses != ["completed"]:
                            print(f"  jobs ended {statuses}", flush=True)
                        results[f"{shape}/{code}"] = all_results(client, ended)
                    measured(shape, "job", code, round_, len(cases), wall)
                    if not args.jobs_only:
                        records, wall = asyncio.run(
                            attribute_all(
                                urls[code], "heuristic", cases, concurrency=args.concurrency
                            )
                        )
                        requests[f"{shape}/{code}"] = {
                            f"{r['project']}/{r['case_id']}": _record_fields(r) for r in records
                        }
                        errors = sum(1 for r in records if r["status"] == "error")
                        if errors:
                            print(f"  {errors} requests failed", flush=True)
                        measured(shape, "request", code, round_, len(cases), wall)
    figures["cases_per_s"] = {
        f"{shape} {mode} {code}": round(len(datasets[shape].cases()) * args.rounds / wall, 2)
        for (shape, mode, code), wall in sorted(seconds.items())
    }
    figures["speed_up"] = {
        f"{shape} {mode}": round(
            seconds[(shape, mode, "before")] / seconds[(shape, mode, "after")], 2
        )
        for (shape, mode, code) in sorted(seconds)
        if code == "after"
    }
    figures["invariance"] = {
        shape: differences(results[f"{shape}/before"], results[f"{shape}/after"])
        for shape in datasets
    }
    figures["request_invariance"] = {
        shape: differences(requests[f"{shape}/before"], requests[f"{shape}/after"])
        for shape in datasets
        if f"{shape}/after" in requests
    }
    figures["load_average_at_end"] = list(os.getloadavg())
    for name, value in figures["cases_per_s"].items():
        print(f"  {name:32} {value:6.2f} cases/s")
    print(f"after/before: {figures['speed_up']}")
    print(f"after vs before, field by field: {figures['invariance']}", flush=True)
    path = save("attribution_before_after", figures)
    print(f"written to {path}")
    fail_loudly(
        [
            problem
            for shape, found in figures["invariance"].items()
            for problem in failures(f"{shape} jobs, after vs before", found)
        ]
        + [
            problem
            for shape, found in figures.get("request_invariance", {}).items()
            for problem in failures(f"{shape} POST /attribute, after vs before", found)
        ]
    )
