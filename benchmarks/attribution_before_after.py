"""Attribution jobs before and after a change, in one run on one Neo4j: cases/s of each under the
same machine load, and their results field by field.

Run: ``python -m benchmarks.attribution_before_after --before DIR`` where ``DIR`` is a checkout
of the code before the change (say ``git worktree add --detach ../before main``); the code after
is this checkout. ``--quick``: 2 conversations.

One Neo4j holds the LoCoMo-derived traces (one project per conversation). Two services run on it,
one from each checkout. Then, ``--rounds`` times, every project's job (``refresh``) runs on the
"before" service and then on the "after" service, one project at a time as
``benchmarks.attribution_job`` does; alternating spreads a change in machine load over both. The
results of the last round are compared (``benchmarks.attr_invariance``: only timing fields may
differ). Figures go to ``benchmarks/results/attribution_before_after.json``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx

from benchmarks.attr_invariance import differences
from benchmarks.attr_run import ingest
from benchmarks.attribution_job import job_results, jobs_pass, locomo
from benchmarks.harness import fresh_neo4j, save
from tests.support.servers import REPO, run_service

COMMAND = "python -m benchmarks.attribution_before_after"


def all_results(client: httpx.Client, ended: dict[str, dict[str, Any]]) -> dict[str, Any]:
    return {
        f"{project}/{case}": result
        for project, job in ended.items()
        for case, result in job_results(client, project, job["id"]).items()
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--before", type=Path, required=True, help="checkout before the change")
    parser.add_argument("--quick", action="store_true", help="2 conversations")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--locomo", default="../shared/data/locomo10")
    args = parser.parse_args(argv)
    dataset = locomo(str(REPO / args.locomo), 2 if args.quick else None)
    projects = sorted({b.batch["project"] for b in dataset.batches})
    failed = sum(
        1 for b in dataset.batches for c in b.batch["cases"] if c.get("verdict") == "failed"
    )
    figures: dict[str, Any] = {
        "command": " ".join([COMMAND, *(argv or sys.argv[1:])]),
        "before": str(args.before.resolve()),
        "after": str(REPO),
        "failed_cases": failed,
        "load_average_at_start": list(os.getloadavg()),
    }
    rows: list[dict[str, Any]] = []
    seconds = {"before": 0.0, "after": 0.0}
    results: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory() as tmp, fresh_neo4j() as local, ExitStack() as stack:
        after = stack.enter_context(run_service(local.uri, Path(tmp)))
        before = stack.enter_context(
            run_service(local.uri, Path(tmp), checkout=args.before.resolve())
        )
        urls = {"before": before.url, "after": after.url}
        with httpx.Client(base_url=after.url, timeout=600) as client:
            print(f"ingested in {ingest(client, dataset.batches):.1f} s", flush=True)
        for round_ in range(args.rounds):
            for name in ("before", "after"):
                with httpx.Client(base_url=urls[name], timeout=600) as client:
                    wall, ended = jobs_pass(client, projects, together=False)
                    seconds[name] += wall
                    load = list(os.getloadavg())
                    rows.append(
                        {
                            "round": round_,
                            "code": name,
                            "seconds": round(wall, 2),
                            "cases_per_s": round(failed / wall, 2),
                            "statuses": sorted({j["status"] for j in ended.values()}),
                            "load_average": load,
                        }
                    )
                    print(
                        f"  {name:6} round {round_}: {failed} cases {wall:6.1f} s "
                        f"{failed / wall:6.1f} cases/s (load {load[0]:.1f})",
                        flush=True,
                    )
                    results[name] = all_results(client, ended)
                figures["rows"] = rows
                save("attribution_before_after", figures)  # so far, should the run be cut short
    figures["cases_per_s"] = {k: round(failed * args.rounds / v, 2) for k, v in seconds.items()}
    figures["speed_up"] = round(seconds["before"] / seconds["after"], 2)
    figures["invariance"] = differences(results["before"], results["after"])
    figures["load_average_at_end"] = list(os.getloadavg())
    print(f"cases/s {figures['cases_per_s']}, after/before {figures['speed_up']}x")
    print(f"after vs before, field by field: {figures['invariance']}", flush=True)
    path = save("attribution_before_after", figures)
    print(f"written to {path}")


if __name__ == "__main__":
    main()
