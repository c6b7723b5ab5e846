"""The console's case list on a big project: ``GET /cases`` with each of its filters on 100,000
cases. Run: ``python -m benchmarks.audits case-search`` (``--cases`` to change the size).

1. A fresh Neo4j and the service; one project of ``--cases`` cases, each answered by its own
   response operation (three systems, a hundred sessions, a minute apart, one in three failed),
   sent in batches of 2,000 cases.
2. Each query the console's filters make, as the case list asks for it (a page of 50, plus one to
   know whether there is a next page), ``--repetitions`` times after one warm-up: its median and
   slowest time through the service, and the median of the same statement run directly on
   Neo4j by the driver (``direct``: the database's share; the rest is HTTP, the service and
   decoding).

Figures go to ``benchmarks/results/audits_case_search.json``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
from neo4j import GraphDatabase, ManagedTransaction, Record

from benchmarks.figures import save
from cypher import query
from tests.support.servers import fresh_neo4j, run_service

COMMAND = "python -m benchmarks.audits case-search"
PROJECT = "case-search"
BATCH = 2_000
PAGE = 51
SYSTEMS = ("mem0", "rag", "letta")
WORDS = ("dog", "job", "city", "trip", "sister", "book", "concert", "garden", "car", "school")

SEARCHES: dict[str, dict[str, Any]] = {
    "first page": {},
    "failed": {"verdict": "failed"},
    "q: a rare answer": {"q": "zebra 31337"},
    "q: a common word": {"q": "garden"},
    "q: no match": {"q": "no case says this"},
    "system + session": {"system": "rag", "session_id": "s42"},
    "time window": {"since": "2026-02-01T00:00:00", "until": "2026-02-08T00:00:00"},
    "not attributed": {"verdict": "failed", "attributed": "false"},
    "error type": {"error_type": "RetrievalError"},
    "newest first": {"sort": "newest"},
    "q, newest first": {"q": "garden", "sort": "newest"},
    "deep page": {"skip": 60_000},
}


def batches(n: int) -> Iterator[dict[str, Any]]:
    for start in range(0, n, BATCH):
        ops, cases = [], []
        for i in range(start, min(n, start + BATCH)):
            ops.append(
                {
                    "id": f"op-{i:06d}",
                    "name": "answer",
                    "kind": "response",
                    "system": SYSTEMS[i % 3],
                    "session_id": f"s{i % 100}",
                    "ts": datetime.fromtimestamp(1_767_225_600 + 60 * i, UTC).isoformat(),
                    "inputs": [{"id": f"q-{i:06d}", "kind": "query", "content": f"question {i}"}],
                    "outputs": [
                        {"id": f"a-{i:06d}", "kind": "answer", "content": f"zebra {i} answer"}
                    ],
                }
            )
            cases.append(
                {
                    "id": f"case-{i:06d}",
                    "question": f"What about the {WORDS[i % len(WORDS)]} of person {i}?",
                    "expected_answer": "something else",
                    "verdict": "failed" if i % 3 == 0 else "passed",
                    "answer_unit": f"a-{i:06d}",
                }
            )
        yield {"project": PROJECT, "units": [], "operations": ops, "cases": cases}


def direct_parameters(params: dict[str, Any]) -> dict[str, Any]:
    """The statement's parameters for a query string, as the service passes them."""

    def moment(key: str) -> datetime | None:
        return datetime.fromisoformat(params[key]).replace(tzinfo=UTC) if key in params else None

    attributed = params.get("attributed")
    return {
        "project": PROJECT,
        "verdict": params.get("verdict"),
        "text": params["q"].lower() if "q" in params else None,
        "system": params.get("system"),
        "session": params.get("session_id"),
        "since": moment("since"),
        "until": moment("until"),
        "error_type": params.get("error_type"),
        "attributed": None if attributed is None else attributed == "true",
        "prompt_version": params.get("prompt_version"),
        "skip": params.get("skip", 0),
        "limit": PAGE,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--cases", type=int, default=100_000)
    parser.add_argument("--repetitions", type=int, default=5)
    parser.add_argument("--out", default="audits_case_search", help="results/<OUT>.json")
    args = parser.parse_args(argv)
    figures: dict[str, Any] = {
        "command": " ".join([COMMAND, *(argv if argv is not None else sys.argv[1:])]),
        "load_average_at_start": os.getloadavg(),
        "cases": args.cases,
        "page": PAGE,
    }
    with (
        tempfile.TemporaryDirectory() as tmp,
        fresh_neo4j(heap="2g", pagecache="1g") as local,
        run_service(local.uri, Path(tmp), ready_s=300) as service,
        httpx.Client(base_url=service.url, timeout=600) as client,
        GraphDatabase.driver(
            local.uri, auth=("neo4j", "unused"), notifications_min_severity="OFF"
        ) as driver,  # auth is off; an empty store warns of labels it has not seen
    ):
        started = time.perf_counter()
        for batch in batches(args.cases):
            client.post("/traces", json=batch).raise_for_status()
        figures["ingest_s"] = round(time.perf_counter() - started, 1)
        print(f"{args.cases} cases stored in {figures['ingest_s']} s", flush=True)
        statements = {
            newest: query("cases/list_cases_newest" if newest else "cases/list_cases")
            for newest in (False, True)
        }

        def read_all(tx: ManagedTransaction, params: dict[str, Any]) -> list[Record]:
            statement = statements[params.get("sort") == "newest"]
            return list(tx.run(statement, direct_parameters(params)))

        results: dict[str, Any] = {}
        for name, params in SEARCHES.items():
            url_params = {"project": PROJECT, "limit": PAGE, **params}
            times, direct = [], []
            rows = 0
            for attempt in range(args.repetitions + 1):
                begun = time.perf_counter()
                answer = client.get("/cases", params=url_params)
                took = time.perf_counter() - begun
                answer.raise_for_status()
                rows = len(answer.json())
                begun = time.perf_counter()
                with driver.session() as session:
                    session.execute_read(read_all, params)
                direct_took = time.perf_counter() - begun
                if attempt:  # the first is the warm-up
                    times.append(took)
                    direct.append(direct_took)
            results[name] = {
                "params": params,
                "rows": rows,
                "median_ms": round(1000 * statistics.median(times), 1),
                "max_ms": round(1000 * max(times), 1),
                "direct_median_ms": round(1000 * statistics.median(direct), 1),
            }
            print(f"{name:>18}: {results[name]}", flush=True)
        figures["searches"] = results
        figures["slowest_median_ms"] = max(r["median_ms"] for r in results.values())
        figures["load_average_at_end"] = os.getloadavg()
    print(f"slowest median: {figures['slowest_median_ms']} ms", flush=True)
    save(args.out, figures)


if __name__ == "__main__":
    main()
