"""The report from kept counts against counting case by case, and the cursor-paged audits' first
page, at growing project sizes. Run: ``python -m benchmarks.audits report-counts`` (``--sizes``
to change them).

1. A fresh Neo4j and the service; per size, a project of that many cases, each a conversation
   of its own (a message, an extraction into a memory, a search that reads the memory and
   returns something else, an answer; three systems, thirty days, one case in three failed,
   the message as evidence), sent in batches of 500 cases; ``--attribute`` failed cases of it
   attributed one by one (``POST /attribute``), so the report has error types, operations and
   prompts to count.
2. Each read ``--repetitions`` times after one warm-up, its median and slowest time through the
   service: ``GET /report`` (kept counts), ``GET /report?recount=true`` (case by case), the
   same two with a system and a midnight-to-midnight window, ``GET /projects``, and the first
   page (100 rows) of ``deleted_then_needed`` and ``retrieval_misses``, then their page from
   the cursor the first gave (the next window of failed cases).
3. The ratio recount / kept per size.

Figures go to ``benchmarks/results/audits_report_counts.json``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx

from benchmarks.figures import save
from tests.support.servers import fresh_neo4j, run_service

COMMAND = "python -m benchmarks.audits report-counts"
BATCH = 500
SYSTEMS = ("mem0", "rag", "letta")
START = datetime(2026, 3, 1, tzinfo=UTC)


def conversation(i: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, Any]]:
    """The units, operations and case of conversation ``i``."""
    at = (START + timedelta(minutes=43 * i) % timedelta(days=30)).isoformat()
    system = SYSTEMS[i % 3]
    fact = f"person {i} keeps a zebra called Z{i}"
    units = [
        {"id": f"m{i}", "kind": "message", "content": f"user: {fact}", "ts": at},
        {"id": f"q{i}", "kind": "query", "content": f"what does person {i} keep?"},
    ]

    def op(oid: str, kind: str, inputs: list[Any], outputs: list[Any]) -> dict[str, Any]:
        return {
            "id": oid,
            "name": f"{system}.{kind}",
            "kind": kind,
            "system": system,
            "ts": at,
            "attributes": {"prompt": f"{kind}-v{i % 2}"},
            "inputs": inputs,
            "outputs": outputs,
        }

    ops = [
        op(
            f"x{i}",
            "extraction",
            [f"m{i}"],
            [
                {
                    "id": f"mem{i}",
                    "kind": "memory",
                    "content": fact,
                    "attributes": {"memory_id": f"e{i}"},
                }
            ],
        ),
        op(
            f"r{i}",
            "retrieval",
            [f"q{i}", f"mem{i}"],
            [{"id": f"c{i}", "kind": "context", "content": "-"}],
        ),
        op(
            f"a{i}",
            "response",
            [f"q{i}", f"c{i}"],
            [{"id": f"ans{i}", "kind": "answer", "content": "none", "ts": at}],
        ),
    ]
    case = {
        "id": f"case-{i:06d}",
        "question": f"what does person {i} keep?",
        "expected_answer": f"a zebra called Z{i}",
        "answer_unit": f"ans{i}",
        "verdict": "failed" if i % 3 == 0 else "passed",
        "evidence_units": [f"m{i}"],
    }
    return units, ops, case


def batches(project: str, n: int) -> Iterator[dict[str, Any]]:
    for start in range(0, n, BATCH):
        units: list[dict[str, Any]] = []
        ops: list[dict[str, Any]] = []
        cases: list[dict[str, Any]] = []
        for i in range(start, min(n, start + BATCH)):
            u, o, c = conversation(i)
            units += u
            ops += o
            cases.append(c)
        yield {"project": project, "units": units, "operations": ops, "cases": cases}


def timed(
    client: httpx.Client, path: str, params: dict[str, Any], repetitions: int
) -> dict[str, Any]:
    """Median and slowest of ``repetitions`` GETs after one warm-up, and the last answer."""
    times: list[float] = []
    answer: Any = None
    for attempt in range(repetitions + 1):
        begun = time.perf_counter()
        response = client.get(path, params=params)
        took = time.perf_counter() - begun
        response.raise_for_status()
        answer = response.json()
        if attempt:
            times.append(took)
    return {
        "median_ms": round(1000 * statistics.median(times), 1),
        "max_ms": round(1000 * max(times), 1),
        "answer": answer,
    }


def measure(client: httpx.Client, project: str, repetitions: int) -> dict[str, Any]:
    reads: dict[str, tuple[str, dict[str, Any]]] = {
        "report (kept)": ("/report", {}),
        "report (recount)": ("/report", {"recount": "true"}),
        "report rag, 7 days (kept)": (
            "/report",
            {"system": "rag", "since": "2026-03-08T00:00:00Z", "until": "2026-03-15T00:00:00Z"},
        ),
        "report rag, 7 days (recount)": (
            "/report",
            {
                "system": "rag",
                "since": "2026-03-08T00:00:00Z",
                "until": "2026-03-15T00:00:00Z",
                "recount": "true",
            },
        ),
        "projects": ("/projects", {}),
        "deleted_then_needed, first page": ("/audits/deleted_then_needed", {"limit": 100}),
        "retrieval_misses, first page": ("/audits/retrieval_misses", {"limit": 100}),
    }
    out: dict[str, Any] = {}
    for name, (path, params) in reads.items():
        result = timed(client, path, {"project": project, **params}, repetitions)
        answer = result.pop("answer")
        if path == "/report":
            result["counted"] = answer["counted"]
            result["cases"] = answer["totals"]["cases"]
        if path.startswith("/audits/"):
            result["rows"] = len(answer["rows"])
            cursor = answer["next_cursor"]
            if cursor:
                following = timed(
                    client, path, {"project": project, **params, "cursor": cursor}, repetitions
                )
                following.pop("answer")
                out[name.replace("first page", "page from the cursor")] = following
        out[name] = result
        print(f"  {name:>34}: {result}", flush=True)
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000])
    parser.add_argument("--attribute", type=int, default=60, help="failed cases attributed")
    parser.add_argument("--repetitions", type=int, default=5)
    parser.add_argument("--out", default="audits_report_counts", help="results/<OUT>.json")
    args = parser.parse_args(argv)
    figures: dict[str, Any] = {
        "command": " ".join([COMMAND, *(argv if argv is not None else sys.argv[1:])]),
        "load_average_at_start": os.getloadavg(),
        "sizes": {},
    }
    with (
        tempfile.TemporaryDirectory() as tmp,
        fresh_neo4j(heap="1g", pagecache="512m") as local,
        run_service(local.uri, Path(tmp), ready_s=300) as service,
        httpx.Client(base_url=service.url, timeout=600) as client,
    ):
        for size in args.sizes:
            project = f"counts-{size}"
            started = time.perf_counter()
            for batch in batches(project, size):
                client.post("/traces", json=batch).raise_for_status()
            ingest_s = round(time.perf_counter() - started, 1)
            started = time.perf_counter()
            for i in range(0, min(size, 3 * args.attribute), 3):
                client.post(
                    f"/attribute/case-{i:06d}", params={"project": project}
                ).raise_for_status()
            attribute_s = round(time.perf_counter() - started, 1)
            print(f"{size} cases stored in {ingest_s} s, attributed in {attribute_s} s", flush=True)
            reads = measure(client, project, args.repetitions)
            kept, recount = reads["report (kept)"], reads["report (recount)"]
            figures["sizes"][str(size)] = {
                "ingest_s": ingest_s,
                "reads": reads,
                "recount_over_kept": round(recount["median_ms"] / kept["median_ms"], 1),
                "recount_over_kept_filtered": round(
                    reads["report rag, 7 days (recount)"]["median_ms"]
                    / reads["report rag, 7 days (kept)"]["median_ms"],
                    1,
                ),
            }
            print(
                f"  recount / kept: {figures['sizes'][str(size)]['recount_over_kept']}", flush=True
            )
        figures["load_average_at_end"] = os.getloadavg()
    save(args.out, figures)


if __name__ == "__main__":
    main()
