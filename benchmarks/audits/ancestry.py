"""``GET /cases/{id}/subgraph`` before and after a change, in one run on one Neo4j: latency of each
under the same machine load, and their answers byte for byte.

Run: ``python -m benchmarks.audits ancestry --before DIR`` where ``DIR`` is a checkout of
the code before the change (``git archive main | tar -x -C DIR`` will do); the code after is this
checkout. ``--quick``: 4 conversations of 300 distractors.

The data is :mod:`.latency`'s (synthetic Mem0 and naive-RAG traces in one project), grown the
same two steps: 1 conversation per system (~6k operations), then ``--conversations`` (12: ~74k
operations). Two services run on the Neo4j, one from each checkout. At each size, the failed case
whose answer's ancestry is nearest 1,000 nodes is asked for ``--repetitions`` times from each
service, alternating request by request so that a change in machine load falls on both (one
cold request each first, not counted). The two answers must be the same bytes, else the run
fails. Figures go to ``benchmarks/results/audits_ancestry.json``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx
from neo4j import GraphDatabase

from benchmarks.attribution.run import ingest
from benchmarks.audits.latency import (
    DISTRACTORS,
    PROJECT,
    QUICK_DISTRACTORS,
    ancestry_case,
    build,
    rest_of,
)
from benchmarks.figures import percentile, save
from tests.support.servers import REPO, fresh_neo4j, run_service

COMMAND = "python -m benchmarks.audits ancestry"
CODES = ("before", "after")


def compare(
    clients: dict[str, httpx.Client], case_id: str, repetitions: int
) -> dict[str, dict[str, Any]]:
    """Alternating requests for the case's subgraph: each side's milliseconds, one answer."""
    path = f"/cases/{case_id}/subgraph"
    times: dict[str, list[float]] = {code: [] for code in CODES}
    bodies: dict[str, bytes] = {}
    for i in range(repetitions + 1):
        for code in CODES:
            started = time.perf_counter()
            response = clients[code].get(path, params={"project": PROJECT})
            elapsed = (time.perf_counter() - started) * 1000
            if response.status_code != 200:
                raise RuntimeError(f"{code}: GET {path}: {response.status_code}")
            bodies[code] = response.content
            if i:
                times[code].append(elapsed)
    if bodies["before"] != bodies["after"]:
        raise RuntimeError(f"GET {path}: the answers differ before and after")
    return {
        code: {
            "median_ms": round(percentile(times[code], 50), 1),
            "p95_ms": round(percentile(times[code], 95), 1),
            "min_ms": round(min(times[code]), 1),
            "max_ms": round(max(times[code]), 1),
            "repetitions": repetitions,
            "response_bytes": len(bodies[code]),
        }
        for code in CODES
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--before", type=Path, required=True, help="checkout before the change")
    parser.add_argument("--quick", action="store_true", help="conversations of 300 distractors")
    parser.add_argument("--conversations", type=int, help="per system at the end (12; quick: 4)")
    parser.add_argument("--repetitions", type=int, default=40, help="timed requests per side")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    distractors = QUICK_DISTRACTORS if args.quick else DISTRACTORS
    conversations = args.conversations or (4 if args.quick else 12)
    small = build(1, distractors, args.seed)
    everything = build(conversations, distractors, args.seed)
    rest = rest_of(everything, small)
    figures: dict[str, Any] = {
        "command": " ".join([COMMAND, *(argv if argv is not None else sys.argv[1:])]),
        "before": str(args.before.resolve()),
        "after": str(REPO),
        "parameters": {
            "conversations_per_system": {"small": 1, "large": conversations},
            "distractors": distractors,
            "repetitions": args.repetitions,
            "seed": args.seed,
        },
    }
    with (
        tempfile.TemporaryDirectory() as tmp,
        fresh_neo4j() as local,
        ExitStack() as stack,
        GraphDatabase.driver(local.uri, auth=("neo4j", "unused")) as driver,
    ):
        after = stack.enter_context(run_service(local.uri, Path(tmp)))
        before = stack.enter_context(
            run_service(local.uri, Path(tmp), checkout=args.before.resolve())
        )
        clients = {
            code: stack.enter_context(httpx.Client(base_url=service.url, timeout=600))
            for code, service in (("before", before), ("after", after))
        }
        for size, dataset in (("small", small), ("large", rest)):
            seconds = ingest(clients["after"], dataset.batches)
            case_id, nodes = ancestry_case(driver)
            load_at_start = list(os.getloadavg())
            requests = compare(clients, case_id, args.repetitions)
            figures[size] = {
                "ingest_seconds": round(seconds, 1),
                "ancestry_case": [case_id, nodes],
                "load_average_at_start": load_at_start,
                "load_average_at_end": list(os.getloadavg()),
                "subgraph": requests,
            }
            print(f"{size}: {nodes}-node ancestry of {case_id}", flush=True)
            for code, row in requests.items():
                print(
                    f"  {code:6} p95 {row['p95_ms']:7.1f} ms  median {row['median_ms']:7.1f}"
                    f"  min {row['min_ms']:6.1f}  ({row['response_bytes']} bytes)",
                    flush=True,
                )
    for code in CODES:
        small_p95 = figures["small"]["subgraph"][code]["p95_ms"]
        figures[f"{code}_large_over_small_p95"] = round(
            figures["large"]["subgraph"][code]["p95_ms"] / small_p95, 2
        )
    print("written to", save("audits_ancestry", figures))
