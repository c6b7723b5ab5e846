"""Ingestion and subgraph benchmarks (issue: foundation). Run: ``python -m benchmarks.ingestion``.

1. Ingestion: N operations (default 200,000), each consuming 2 units and producing 2, sent in
   batches of 1,000 through ``POST /traces``; then the same batches through the writer directly
   (``repository.traces.write_batch``, no HTTP), each into a fresh Neo4j. Prints operations/s for
   both and their ratio.
2. Subgraph: p50/p95 of ``GET /cases/{id}/subgraph`` for a case with ~500 ancestor nodes in a graph
   of ~10k nodes, then again after growing the graph to >= 1M nodes.

Figures go to ``benchmarks/results/ingestion.json``. Both paths send with the same concurrency.
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
from memtrace_client.models import TraceBatch

from benchmarks.harness import fresh_neo4j, percentile, save, service_on
from ingest.rows import batch_rows
from service.db import apply_schema, create_driver
from service.repository.traces import write_batch
from service.settings import Settings

TS = "2026-01-01T00:00:00Z"


def chain_batches(project: str, n_ops: int, batch_size: int) -> Iterator[dict[str, Any]]:
    """Operation i consumes the two outputs of operation i-1 and produces two new units."""
    for start in range(0, n_ops, batch_size):
        ops = []
        for i in range(start, min(start + batch_size, n_ops)):
            inputs = [f"u{i - 1}a", f"u{i - 1}b"] if i else ["seed-a", "seed-b"]
            ops.append(
                {
                    "id": f"op{i}",
                    "name": "memory_system.memory_update",
                    "kind": "update",
                    "system": "bench",
                    "session_id": f"s{i // 100}",
                    "ts": TS,
                    "inputs": inputs,
                    "outputs": [
                        {
                            "id": f"u{i}a",
                            "kind": "memory",
                            "content": f"fact {i} a: the quick brown fox",
                        },
                        {
                            "id": f"u{i}b",
                            "kind": "memory",
                            "content": f"fact {i} b: jumps over the dog",
                        },
                    ],
                }
            )
        yield {"project": project, "operations": ops}


def bench_api(url: str, batches: list[dict[str, Any]], concurrency: int) -> float:
    def send(batch: dict[str, Any]) -> None:
        with httpx.Client(base_url=url, timeout=300) as client:
            response = client.post("/traces", json=batch)
            response.raise_for_status()

    started = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(concurrency) as pool:
        list(pool.map(send, batches))
    return time.perf_counter() - started


def bench_direct(uri: str, batches: list[dict[str, Any]], concurrency: int) -> float:
    async def run() -> float:
        settings = Settings(neo4j_uri=uri)
        driver = create_driver(settings)
        await apply_schema(driver, settings.neo4j_database)
        queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        for b in batches:
            queue.put_nowait(b)

        async def worker() -> None:
            async with driver.session(database=settings.neo4j_database) as session:
                while not queue.empty():
                    batch = queue.get_nowait()
                    await write_batch(session, batch_rows(TraceBatch.model_validate(batch)))

        started = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        elapsed = time.perf_counter() - started
        await driver.close()
        return elapsed

    return asyncio.run(run())


def ingestion(n_ops: int, batch_size: int, concurrency: int, workdir: Path) -> dict[str, Any]:
    batches = list(chain_batches("bench", n_ops, batch_size))
    with fresh_neo4j() as local, service_on(local, workdir) as service:
        api_s = bench_api(service.url, batches, concurrency)
    with fresh_neo4j() as local:
        direct_s = bench_direct(local.uri, batches, concurrency)
    return {
        "operations": n_ops,
        "batch_size": batch_size,
        "concurrency": concurrency,
        "api_seconds": round(api_s, 2),
        "api_ops_per_s": round(n_ops / api_s),
        "direct_seconds": round(direct_s, 2),
        "direct_ops_per_s": round(n_ops / direct_s),
        "api_to_direct_ratio": round(direct_s / api_s, 3),
    }


def mem0_case(project: str, prefix: str) -> dict[str, Any]:
    """One question whose answer has 505 ancestors: 200 messages -> 50 extractions -> 100 facts
    -> 50 updates -> 100 memories -> one retrieval over all of them -> one answer."""
    p = prefix
    units = [
        {"id": f"{p}m{i}", "kind": "message", "content": f"turn {i}", "ts": TS} for i in range(200)
    ]
    ops: list[dict[str, Any]] = []
    for j in range(50):
        ops.append(
            {
                "id": f"{p}ex{j}",
                "name": "extract_facts",
                "kind": "extraction",
                "ts": TS,
                "inputs": [f"{p}m{4 * j + k}" for k in range(4)],
                "outputs": [
                    {"id": f"{p}f{2 * j + k}", "kind": "memory", "content": "f"} for k in range(2)
                ],
            }
        )
        ops.append(
            {
                "id": f"{p}up{j}",
                "name": "update_memory_decision",
                "kind": "update",
                "ts": TS,
                "inputs": [f"{p}f{2 * j}", f"{p}f{2 * j + 1}"],
                "outputs": [
                    {"id": f"{p}mem{2 * j + k}", "kind": "memory", "content": "m"} for k in range(2)
                ],
            }
        )
    ops.append(
        {
            "id": f"{p}ret",
            "name": "search",
            "kind": "retrieval",
            "ts": TS,
            "inputs": [{"id": f"{p}q", "kind": "query", "content": "q"}]
            + [f"{p}mem{i}" for i in range(100)],
            "outputs": [{"id": f"{p}ctx", "kind": "context", "content": "c"}],
        }
    )
    ops.append(
        {
            "id": f"{p}ans-op",
            "name": "answer",
            "kind": "response",
            "ts": TS,
            "inputs": [f"{p}q", f"{p}ctx"],
            "outputs": [{"id": f"{p}ans", "kind": "answer", "content": "a"}],
        }
    )
    case = {
        "id": f"{p}case",
        "question": "q",
        "expected_answer": "e",
        "answer_unit": f"{p}ans",
        "verdict": "failed",
    }
    return {"project": project, "units": units, "operations": ops, "cases": [case]}


def time_subgraph(url: str, project: str, case_id: str, n: int) -> dict[str, float]:
    timings = []
    with httpx.Client(base_url=url, timeout=60) as client:
        for i in range(n + 5):
            started = time.perf_counter()
            response = client.get(f"/cases/{case_id}/subgraph", params={"project": project})
            elapsed = (time.perf_counter() - started) * 1000
            response.raise_for_status()
            if i >= 5:  # the first requests warm the query cache
                timings.append(elapsed)
        nodes = len(response.json()["nodes"])
    return {
        "ancestor_nodes": nodes,
        "p50_ms": round(percentile(timings, 50), 1),
        "p95_ms": round(percentile(timings, 95), 1),
    }


def subgraph(small_copies: int, large_copies: int, requests: int, workdir: Path) -> dict[str, Any]:
    with (
        fresh_neo4j() as local,
        service_on(local, workdir) as service,
        httpx.Client(base_url=service.url, timeout=600) as client,
    ):

        def load(start: int, stop: int) -> None:
            for i in range(start, stop):
                client.post("/traces", json=mem0_case("g", f"c{i}-")).raise_for_status()

        load(0, small_copies)
        small = time_subgraph(service.url, "g", "c0-case", requests)
        small["graph_nodes"] = small_copies * 505
        started = time.perf_counter()
        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            half = (small_copies + large_copies) // 2
            list(pool.map(lambda r: load(*r), [(small_copies, half), (half, large_copies)]))
        grow_s = time.perf_counter() - started
        large = time_subgraph(service.url, "g", "c0-case", requests)
        large["graph_nodes"] = large_copies * 505
    return {
        "small": small,
        "large": large,
        "grow_seconds": round(grow_s, 1),
        "p95_ratio_large_to_small": round(large["p95_ms"] / small["p95_ms"], 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--operations", type=int, default=200_000)
    parser.add_argument("--batch-size", type=int, default=1_000)
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--small-copies", type=int, default=20, help="cases in the ~10k graph")
    parser.add_argument("--large-copies", type=int, default=2_000, help="cases in the 1M graph")
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--skip", choices=["ingestion", "subgraph"], action="append", default=[])
    args = parser.parse_args()
    figures: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        if "ingestion" not in args.skip:
            figures["ingestion"] = ingestion(
                args.operations, args.batch_size, args.concurrency, workdir
            )
            print("ingestion:", figures["ingestion"], flush=True)
        if "subgraph" not in args.skip:
            figures["subgraph"] = subgraph(
                args.small_copies, args.large_copies, args.requests, workdir
            )
            print("subgraph:", figures["subgraph"], flush=True)
    print("written to", save("ingestion", figures))


if __name__ == "__main__":
    main()
