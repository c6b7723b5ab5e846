"""What the writer's marks (``reaches_memory``, ``rewrites_memory``) cost at ingest, and whether the
audits that seek on them find the rows the full walks found: before and after, in one run on one
Neo4j.

Run: ``python -m benchmarks.ingest marks --before DIR`` where ``DIR`` is a checkout
of the code before the marks (``git worktree add DIR 16a0142`` will do); the code after is this
checkout. ``--quick``: conversations of 300 distractors.

The data is ``benchmarks.audits.latency``'s (synthetic Mem0 and naive-RAG traces, 12 sessions
each), sent in its batches (a conversation's batches in order, as ``benchmarks.audits latency``
sends them), or with ``--batch-operations N`` as a stream of N-operation batches (each
conversation's units first, its cases last: most operations then read and write units stored by
earlier batches, which the writer cannot settle within the batch), to two services on one Neo4j,
one from each checkout, each into a project of its own. The services take turns batch by batch, so
a change in machine load falls on both. Then every audit of ``GET /audits`` is read to the end from
each service over its own project: the rows must be the same (the before service walks the project,
the after one seeks the marks), else the run fails. Figures go to
``benchmarks/results/ingest_marks.json`` (``--out`` to name another file).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx

from benchmarks.attribution.run import split_batch
from benchmarks.audits.latency import DISTRACTORS, QUICK_DISTRACTORS, build
from benchmarks.figures import percentile, save
from tests.support.servers import REPO, fresh_neo4j, run_service

COMMAND = "python -m benchmarks.ingest marks"
CODES = ("before", "after")


def all_rows(client: httpx.Client, name: str, project: str) -> list[dict[str, Any]]:
    """Every row of one audit, page by page."""
    found: list[dict[str, Any]] = []
    skip: int | None = 0
    while skip is not None:
        page = client.get(
            f"/audits/{name}", params={"project": project, "skip": skip, "limit": 1000}
        )
        page.raise_for_status()
        body = page.json()
        found.extend(body["rows"])
        skip = body["next_skip"]
    return found


def stream(batch: dict[str, Any], size: int) -> list[dict[str, Any]]:
    """``batch`` as batches of ``size`` operations: its units with the first, its cases with
    the last."""
    ops = batch["operations"]
    chunks = [ops[i : i + size] for i in range(0, len(ops), size)] or [[]]
    parts = [{**batch, "units": [], "operations": chunk, "cases": []} for chunk in chunks]
    parts[0]["units"] = batch.get("units", [])
    parts[-1]["cases"] = batch.get("cases", [])
    return parts


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--before", type=Path, required=True, help="checkout before the change")
    parser.add_argument("--quick", action="store_true", help="conversations of 300 distractors")
    parser.add_argument("--conversations", type=int, default=4, help="per system")
    parser.add_argument("--batch-operations", type=int, help="re-send as batches of N operations")
    parser.add_argument("--out", default="ingest_marks", help="results/<OUT>.json")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    distractors = QUICK_DISTRACTORS if args.quick else DISTRACTORS
    dataset = build(args.conversations, distractors, args.seed)
    parts = [part for item in dataset.batches for part in split_batch(item.batch)]
    if args.batch_operations:
        parts = [chunk for part in parts for chunk in stream(part, args.batch_operations)]
    figures: dict[str, Any] = {
        "command": " ".join([COMMAND, *(argv if argv is not None else sys.argv[1:])]),
        "before": str(args.before.resolve()),
        "after": str(REPO),
        "parameters": {
            "conversations_per_system": args.conversations,
            "distractors": distractors,
            "batch_operations": args.batch_operations,
            "batches": len(parts),
            "operations": sum(len(p["operations"]) for p in parts),
            "seed": args.seed,
        },
    }
    with tempfile.TemporaryDirectory() as tmp, fresh_neo4j() as local, ExitStack() as stack:
        services = {
            "after": stack.enter_context(run_service(local.uri, Path(tmp))),
            "before": stack.enter_context(
                run_service(local.uri, Path(tmp), checkout=args.before.resolve())
            ),
        }
        clients = {
            code: stack.enter_context(httpx.Client(base_url=service.url, timeout=600))
            for code, service in services.items()
        }
        seconds: dict[str, list[float]] = {code: [] for code in CODES}
        for i, part in enumerate(parts):
            for code in CODES if i % 2 == 0 else reversed(CODES):
                body = {**part, "project": f"marks-{code}"}
                started = time.perf_counter()
                response = clients[code].post("/traces", json=body)
                seconds[code].append(time.perf_counter() - started)
                if response.status_code != 200:
                    raise RuntimeError(f"{code}: {response.status_code} {response.text[:300]}")
        for code in CODES:
            figures[code] = {
                "ingest_seconds": round(sum(seconds[code]), 2),
                "median_batch_ms": round(percentile(seconds[code], 50) * 1000, 1),
                "operations_per_s": round(
                    figures["parameters"]["operations"] / sum(seconds[code]), 1
                ),
            }
        figures["after_over_before_seconds"] = round(
            figures["after"]["ingest_seconds"] / figures["before"]["ingest_seconds"], 3
        )
        names = [a["name"] for a in clients["after"].get("/audits").raise_for_status().json()]
        same: dict[str, int] = {}
        for name in names:
            rows = {code: all_rows(clients[code], name, f"marks-{code}") for code in CODES}
            if rows["before"] != rows["after"]:
                raise RuntimeError(f"audit {name}: the rows differ before and after")
            same[name] = len(rows["after"])
        figures["same_rows"] = same
    print(
        f"{figures['parameters']['operations']} operations in {len(parts)} batches: "
        f"before {figures['before']['ingest_seconds']} s, after "
        f"{figures['after']['ingest_seconds']} s (after / before "
        f"{figures['after_over_before_seconds']}); same audit rows: {same}"
    )
    print("written to", save(args.out, figures))
