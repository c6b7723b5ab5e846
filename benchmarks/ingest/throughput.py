"""Ingestion and subgraph benchmarks. Run: ``python -m benchmarks.ingest throughput``.

1. Ingestion: N operations per path and shape (default 200,000), each consuming 2 units and
   producing 2, in batches of 1,000, in two shapes (``--shapes``): ``chain``, where
   ``--concurrency`` senders each send their own chain in order (as each instance of a memory
   system sends its own trace), so every batch's inputs are outputs of that sender's previous
   batch, already stored and referenced by id; ``extraction``, where each operation reads two new
   messages defined inline and writes two new memories. All paths write into one fresh Neo4j, a
   project each, taking turns round by round (``--rounds``), so a change of the machine's load
   slows each path alike:
   - limit: the same graph (same nodes, properties, CONSUMES / PRODUCES / PRODUCED_BY edges) by the
     plain ``CREATE`` statements alone (``cypher/ingest/create_*``), one transaction per batch, from
     rows built straight from the JSON: no validation, no fingerprints, no look-ups, no HTTP;
   - minimal: the minimal graph carrying the same operations, units and edges: what the trace
     sends (ids, kinds, names, contents, times, ordered CONSUMES / PRODUCES) and nothing the
     service derives (no fingerprints, marks, scope names, reverse edges, counts), under labels of
     its own whose only indexes are the two (project, id) keys (``cypher/benchmarks/minimal_*``),
     by plain ``CREATE`` statements from the same rows: what any writer of this graph must pay;
   - api: ``POST /traces`` to this checkout's service (all ids new);
   - direct: the service's writer (``repository.traces.write_batch``) without HTTP;
   - before (with ``--before DIR``): ``POST /traces`` to a service run from another checkout
     (``git worktree add DIR main``), for a before/after in one run; ``--before .`` runs this
     checkout in both slots (an A/A run: how far two identical services differ in one run).
   Each service slot then re-sends its round's batches (identical: nothing is written) and one
   conflict batch per sender (one operation redefined: 409, nothing written), timed apart from
   the new batches, after every path's new batches of the round: both slots serve the same
   requests, so neither's new batches follow work the other did not do.
   Prints operations/s and each path's ratio to both limits (over the run, and the median of the
   rounds' ratios; the paths take turns so that each goes first, and comes straight after each
   other one, equally often in a cycle of rounds: give ``--rounds`` a multiple of the number of
   paths, twice that when it is odd), api / before likewise; a re-send's against the limit's time
   for the same batches new; a conflict batch's time next to the limit's time per new batch.
2. Subgraph: p50/p95 of ``GET /cases/{id}/subgraph`` for a case with ~500 ancestor nodes in a graph
   of ~10k nodes, then again after growing the graph to >= 1M nodes.

Figures go to ``benchmarks/results/ingest_throughput.json`` (``--out`` to name another file).
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx
import psutil
from memtrace_client.models import TraceBatch
from neo4j import AsyncDriver, AsyncManagedTransaction, AsyncSession

from benchmarks.figures import RESULTS, percentile, save
from cypher import query
from ingest.rows import batch_rows
from service.db import apply_schema, create_driver
from service.settings import Settings, get_settings
from service.traces.repository import write_batch
from tests.support.servers import fresh_neo4j, run_service

COMMAND = "python -m benchmarks.ingest throughput"

TS = "2026-01-01T00:00:00Z"
Streams = list[list[dict[str, Any]]]
"""One list of batches per sender, sent in order."""


def chain_batches(
    project: str, n_ops: int, batch_size: int, prefix: str = ""
) -> Iterator[dict[str, Any]]:
    """Operation i consumes the two outputs of operation i-1 and produces two new units."""
    p = prefix
    for start in range(0, n_ops, batch_size):
        ops = []
        for i in range(start, min(start + batch_size, n_ops)):
            inputs = [f"{p}u{i - 1}a", f"{p}u{i - 1}b"] if i else [f"{p}seed-a", f"{p}seed-b"]
            ops.append(
                {
                    "id": f"{p}op{i}",
                    "name": "memory_system.memory_update",
                    "kind": "update",
                    "system": "bench",
                    "session_id": f"s{i // 100}",
                    "ts": TS,
                    "inputs": inputs,
                    "outputs": [
                        {
                            "id": f"{p}u{i}a",
                            "kind": "memory",
                            "content": f"fact {i} a: the quick brown fox",
                        },
                        {
                            "id": f"{p}u{i}b",
                            "kind": "memory",
                            "content": f"fact {i} b: jumps over the dog",
                        },
                    ],
                }
            )
        yield {"project": project, "operations": ops}


def extraction_batches(
    project: str, n_ops: int, batch_size: int, prefix: str = ""
) -> Iterator[dict[str, Any]]:
    """Operation i reads two new messages, defined inline among its inputs, and writes two new
    memories: an extraction step, which brings its conversation turns with it."""
    p = prefix
    for start in range(0, n_ops, batch_size):
        ops = []
        for i in range(start, min(start + batch_size, n_ops)):
            ops.append(
                {
                    "id": f"{p}op{i}",
                    "name": "memory_system.extract_facts",
                    "kind": "extraction",
                    "system": "bench",
                    "session_id": f"s{i // 100}",
                    "ts": TS,
                    "inputs": [
                        {
                            "id": f"{p}m{i}a",
                            "kind": "message",
                            "content": f"user, turn {i}: I adopted a dog named Rex last week",
                            "ts": TS,
                        },
                        {
                            "id": f"{p}m{i}b",
                            "kind": "message",
                            "content": f"assistant, turn {i}: congratulations, what breed is he?",
                            "ts": TS,
                        },
                    ],
                    "outputs": [
                        {"id": f"{p}u{i}a", "kind": "memory", "content": f"fact {i} a: has a dog"},
                        {"id": f"{p}u{i}b", "kind": "memory", "content": f"fact {i} b: named Rex"},
                    ],
                }
            )
        yield {"project": project, "operations": ops}


SHAPES = {"chain": chain_batches, "extraction": extraction_batches}
"""chain: inputs referenced by id (the previous operation's outputs); extraction: new inputs
defined inline."""


def shape_streams(shape: str, project: str, n_ops: int, batch_size: int, senders: int) -> Streams:
    """``senders`` streams of ``n_ops / senders`` operations of ``shape`` each, distinct ids."""
    share = n_ops // senders
    batches = SHAPES[shape]
    return [list(batches(project, share, batch_size, f"w{j}-")) for j in range(senders)]


def chain_streams(project: str, n_ops: int, batch_size: int, senders: int) -> Streams:
    """``senders`` chains of ``n_ops / senders`` operations each, with distinct ids."""
    return shape_streams("chain", project, n_ops, batch_size, senders)


def _send_all(url: str, streams: Streams, expect: int) -> None:
    """Send every stream, one sender (and connection) each; each batch answered ``expect``."""

    def send(batches: list[dict[str, Any]]) -> None:
        with httpx.Client(base_url=url, timeout=300) as client:
            for batch in batches:
                response = client.post("/traces", json=batch)
                if response.status_code != expect:
                    raise RuntimeError(f"expected {expect}, got {response.status_code}")

    with concurrent.futures.ThreadPoolExecutor(len(streams)) as pool:
        list(pool.map(send, streams))


def conflicting(batch: dict[str, Any]) -> dict[str, Any]:
    """``batch`` with its last operation renamed: a redefinition of a stored id (409)."""
    ops = list(batch["operations"])
    ops[-1] = {**ops[-1], "name": "renamed"}
    return {**batch, "operations": ops}


def limit_rows(batch: dict[str, Any]) -> dict[str, list[Any]]:
    """The rows of the create statements, straight from the JSON of a ``chain_batches`` or
    ``extraction_batches`` batch: every unit defined inline (inputs or outputs) is a unit row.
    ``fp`` is a fixed 32-character string: the same bytes stored, no hashing."""
    fp = "0" * 32
    units, ops = [], []
    for op in batch["operations"]:
        for unit in (*op["inputs"], *op["outputs"]):
            if isinstance(unit, dict):
                units.append({"ts": None, **unit, "attributes": None, "memory_id": None, "fp": fp})
        ops.append(
            {
                **op,
                "attributes": None,
                "fp": fp,
                "inputs": _limit_edges(op["inputs"]),
                "outputs": _limit_edges(op["outputs"]),
            }
        )
    seeds = [u for u in batch["operations"][0]["inputs"] if isinstance(u, str) and "seed" in u]
    return {"seeds": seeds, "units": units, "operations": ops}


def _limit_edges(refs: list[str | dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {"unit": ref if isinstance(ref, str) else ref["id"], "position": i}
        for i, ref in enumerate(refs)
    ]


async def _limit_write(tx: AsyncManagedTransaction, project: str, rows: dict[str, Any]) -> None:
    if rows["seeds"]:  # the first batch of a chain: its inputs are referenced only
        await tx.run(query("ingest/create_unit_refs"), project=project, ids=rows["seeds"])
    await tx.run(query("ingest/create_units"), project=project, rows=rows["units"])
    await tx.run(query("ingest/create_operations"), project=project, rows=rows["operations"])


async def _limit(session: AsyncSession, batch: dict[str, Any]) -> None:
    rows = limit_rows(batch)  # timed, as the API's own rows are
    await session.execute_write(_limit_write, batch["project"], rows)


async def _minimal_write(tx: AsyncManagedTransaction, project: str, rows: dict[str, Any]) -> None:
    if rows["seeds"]:
        await tx.run(query("benchmarks/minimal_unit_refs"), project=project, ids=rows["seeds"])
    await tx.run(query("benchmarks/minimal_units"), project=project, rows=rows["units"])
    await tx.run(query("benchmarks/minimal_operations"), project=project, rows=rows["operations"])


async def _minimal(session: AsyncSession, batch: dict[str, Any]) -> None:
    rows = limit_rows(batch)  # the same rows as the limit's: their extra fields go unread
    await session.execute_write(_minimal_write, batch["project"], rows)


async def minimal_schema(driver: AsyncDriver) -> None:
    for name in ("benchmarks/minimal_unit_key", "benchmarks/minimal_operation_key"):
        await driver.execute_query(query(name), database_="neo4j")


PLAIN = {"limit": _limit, "minimal": _minimal}
"""The paths that write by plain ``CREATE`` statements: the two limits."""


async def _direct(session: AsyncSession, batch: dict[str, Any]) -> None:
    rows = batch_rows(TraceBatch.model_validate(batch))
    await write_batch(session, rows, get_settings().write_transaction_rows)


async def write_all(
    driver: AsyncDriver,
    streams: Streams,
    write: Callable[[AsyncSession, dict[str, Any]], Awaitable[None]],
) -> None:
    async def sender(batches: list[dict[str, Any]]) -> None:
        async with driver.session(database="neo4j") as session:
            for batch in batches:
                await write(session, batch)

    await asyncio.gather(*(sender(s) for s in streams))


def _chunk(streams: Streams, rounds: int, r: int) -> Streams:
    """Round ``r`` of ``rounds``: the same slice of each sender's batches."""
    return [s[len(s) * r // rounds : len(s) * (r + 1) // rounds] for s in streams]


SERVED = ("api", "before")
"""The paths that are a service over HTTP: each also takes re-sends and conflicts."""


def turns(n: int, r: int) -> list[int]:
    """The order the ``n`` paths take in round ``r``: a row of a Williams design (a Latin square
    in which each path comes straight after each other path equally often), so that what one
    path leaves behind (Neo4j's garbage, checkpoints) falls on every other path alike, not on
    the same follower every round. A cycle is ``n`` rounds (``2n`` when ``n`` is odd: the rows
    then also run backwards)."""
    base = [0]
    for k in range(1, n):  # 0, 1, n-1, 2, n-2, ...
        base.append((k + 1) // 2 if k % 2 else n - k // 2)
    row = [(b + r) % n for b in base]
    return row[::-1] if n % 2 and (r // n) % 2 else row


def round_steps(paths: tuple[str, ...], r: int) -> list[tuple[str, str]]:
    """Round ``r``'s timed steps in order, as ``(path, what)``: ``what`` is ``new`` (the round's
    new batches), ``resend`` (the same again) or ``conflict``. The paths take turns (``turns``);
    every service slot (``SERVED``) re-sends and sends conflicts, after all the paths' new
    batches: the two slots serve the same requests in the same places, so that the new batches
    of neither follow work the other did not do (an A/A run, ``--before .``, then reads ~1.0)."""
    order = [paths[i] for i in turns(len(paths), r)]
    served = [p for p in order if p in SERVED]
    return [(p, "new") for p in order] + [(p, w) for p in served for w in ("resend", "conflict")]


def median(values: list[float]) -> float:
    return statistics.median(values) if values else 0.0


def ingestion(
    n_ops: int,
    batch_size: int,
    concurrency: int,
    rounds: int,
    workdir: Path,
    shapes: tuple[str, ...] = ("chain",),
    before: Path | None = None,
    neo4j_memory: str = "3g",
) -> dict[str, Any]:
    """All paths of all ``shapes`` on one Neo4j (a project each), taking turns round by round,
    so that a machine whose load changes during the run (this one is shared) slows each path
    alike. ``before``: a checkout whose service is run beside this one's (path ``before``)."""
    paths = ("limit", "minimal", "api", "direct", *(("before",) if before else ()))
    measured = tuple(p for p in paths if p != "minimal")  # read against the limits they are not
    served = tuple(p for p in paths if p in SERVED)
    streams = {
        (shape, p): shape_streams(shape, f"{shape}-{p}", n_ops, batch_size, concurrency)
        for shape in shapes
        for p in paths
    }
    keys = (*paths, *(f"{p}_{what}" for p in served for what in ("resend", "conflict")))
    seconds = {(shape, k): 0.0 for shape in shapes for k in keys}
    # Each round's ratio to the limit, per path: their median is read next to the totals' ratio
    # (a round that a burst of load fell on moves the total, not the median).
    ratios = [(f"{p}_to_{limit}", p, limit) for p in measured for limit in PLAIN if p != limit]
    round_ratios: dict[tuple[str, str], list[float]] = {
        (shape, name): [] for shape in shapes for name in (*(r[0] for r in ratios), "api_to_before")
    }
    # CPU seconds per path of Neo4j, of the service processes, and of this process (the HTTP
    # senders for the API; rows and the driver for limit and direct): where the time goes.
    cpu = {
        (shape, k): dict.fromkeys(("neo4j", "service", "bench"), 0.0)
        for shape in shapes
        for k in keys
    }
    n_conflicts = {(shape, p): 0 for shape in shapes for p in served}

    with ExitStack() as stack:
        local = stack.enter_context(fresh_neo4j(neo4j_memory, neo4j_memory, start_s=600))
        # One event loop and one driver for the direct paths, made before any timing starts.
        # The schema first: the services then start on a store that has it.
        loop = asyncio.new_event_loop()
        settings = Settings(neo4j_uri=local.uri)
        driver = create_driver(settings)
        loop.run_until_complete(apply_schema(driver, settings.neo4j_database))
        loop.run_until_complete(minimal_schema(driver))
        # A start-up on a machine others load can take minutes: wait for it, untimed.
        urls = {"api": stack.enter_context(run_service(local.uri, workdir, ready_s=600))}
        if before:
            urls["before"] = stack.enter_context(
                run_service(
                    local.uri,
                    workdir,
                    checkout=before,
                    ready_s=600,
                    PYTHONPATH=f"{before}{os.pathsep}{before / 'clients' / 'python'}",
                )
            )
        services = {path: handle.url for path, handle in urls.items()}
        processes = {
            "neo4j": [psutil.Process(local.pid())],
            "service": [psutil.Process(handle.process.pid) for handle in urls.values()],
            "bench": [psutil.Process()],
        }

        def cpu_now() -> dict[str, float]:
            return {
                name: sum(sum(p.cpu_times()[:2]) for p in group)
                for name, group in processes.items()
            }

        def timed(key: tuple[str, str], work: Callable[..., object], *args: Any) -> float:
            before_cpu, started = cpu_now(), time.perf_counter()
            work(*args)
            elapsed = time.perf_counter() - started
            seconds[key] += elapsed
            for name, value in cpu_now().items():
                cpu[key][name] += value - before_cpu[name]
            return elapsed

        def write(path: str, chunk: Streams) -> None:
            if path in services:
                _send_all(services[path], chunk, 200)
            else:
                loop.run_until_complete(write_all(driver, chunk, PLAIN.get(path, _direct)))

        # Untimed: one batch per sender on each path first, so that no path pays alone for the
        # JVM's warm-up or the first query plans.
        for shape in shapes:
            for path in paths:
                warm = f"warm-{shape}-{path}"
                write(
                    path,
                    shape_streams(shape, warm, batch_size * concurrency, batch_size, concurrency),
                )
        for r in range(rounds):
            for shape in shapes:
                took: dict[str, float] = {}
                for path, what in round_steps(paths, r):
                    chunk = _chunk(streams[shape, path], rounds, r)
                    if what == "new":
                        took[path] = timed((shape, path), write, path, chunk)
                    elif what == "resend":
                        timed((shape, f"{path}_resend"), _send_all, services[path], chunk, 200)
                    else:
                        conflicts = [[conflicting(s[-1])] for s in chunk if s]
                        n_conflicts[shape, path] += len(conflicts)
                        key = (shape, f"{path}_conflict")
                        timed(key, _send_all, services[path], conflicts, 409)
                for name, path, limit in ratios:
                    round_ratios[shape, name].append(took[limit] / took[path])
                if before:
                    round_ratios[shape, "api_to_before"].append(took["before"] / took["api"])
                print(
                    f"round {r + 1}/{rounds} {shape}: "
                    + ", ".join(f"{k} {seconds[shape, k]:.1f}s" for k in keys),
                    flush=True,
                )
        loop.run_until_complete(driver.close())
        loop.close()
    figures: dict[str, Any] = {}
    for shape in shapes:
        total = sum(len(b["operations"]) for s in streams[shape, "api"] for b in s)
        n_batches = sum(len(s) for s in streams[shape, "api"])
        per_batch = {k: n_batches for k in keys}
        per_batch.update({f"{p}_conflict": n_conflicts[shape, p] for p in served})
        limit_s = seconds[shape, "limit"]
        figures[shape] = {
            "operations_per_path": total,
            "cpu_ms_per_batch": {
                k: {name: round(v / per_batch[k] * 1000) for name, v in cpu[shape, k].items()}
                for k in keys
            },
            **{f"{p}_ops_per_s": round(total / seconds[shape, p]) for p in paths},
            **{
                name: round(seconds[shape, limit] / seconds[shape, path], 3)
                for name, path, limit in ratios
            },
            **{
                f"{name}_median_round": round(median(round_ratios[shape, name]), 3)
                for name, _, _ in ratios
            },
            **(
                {
                    "api_to_before": round(seconds[shape, "before"] / seconds[shape, "api"], 3),
                    "api_to_before_median_round": round(
                        median(round_ratios[shape, "api_to_before"]), 3
                    ),
                }
                if before
                else {}
            ),
            "limit_ms_per_batch": round(limit_s / n_batches * 1000, 1),
            "minimal_ms_per_batch": round(seconds[shape, "minimal"] / n_batches * 1000, 1),
        }
        for p in served:
            figures[shape] |= {
                f"{p}_resend_ops_per_s": round(total / seconds[shape, f"{p}_resend"]),
                f"{p}_resend_to_limit": round(limit_s / seconds[shape, f"{p}_resend"], 3),
                f"{p}_conflict_batches": n_conflicts[shape, p],
                f"{p}_conflict_ms_per_batch": round(
                    seconds[shape, f"{p}_conflict"] / n_conflicts[shape, p] * 1000, 1
                ),
            }
    return {
        "batch_size": batch_size,
        "concurrency": concurrency,
        "rounds": rounds,
        "neo4j_heap_and_pagecache": neo4j_memory,
        **({"before": str(before)} if before else {}),
        **figures,
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
        run_service(local.uri, workdir) as service,
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


def carried_over(out: str, skipped: list[str]) -> dict[str, Any]:
    """The parts of an earlier ``results/<out>.json`` this run skips, each with the date it was
    measured, so that one file keeps the latest figures of both parts."""
    path = RESULTS / f"{out}.json"
    if not skipped or not path.exists():
        return {}
    earlier = json.loads(path.read_text())
    return {
        part: {"measured_at": earlier["measured_at"], **earlier[part]}
        for part in skipped
        if part in earlier
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--operations", type=int, default=200_000, help="per path and shape")
    parser.add_argument("--batch-size", type=int, default=1_000)
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=10, help="turns the paths take")
    parser.add_argument(
        "--shapes", nargs="+", choices=sorted(SHAPES), default=["chain", "extraction"]
    )
    parser.add_argument("--before", type=Path, help="a checkout whose API is measured beside")
    parser.add_argument("--neo4j-memory", default="3g", help="Neo4j's heap and page cache each")
    parser.add_argument("--out", default="ingest_throughput", help="results/<OUT>.json")
    parser.add_argument("--small-copies", type=int, default=20, help="cases in the ~10k graph")
    parser.add_argument("--large-copies", type=int, default=2_000, help="cases in the 1M graph")
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--skip", choices=["ingestion", "subgraph"], action="append", default=[])
    args = parser.parse_args(argv)
    figures: dict[str, Any] = {
        "command": " ".join([COMMAND, *(sys.argv[1:] if argv is None else argv)])
    }
    figures.update(carried_over(args.out, args.skip))
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        if "ingestion" not in args.skip:
            figures["ingestion"] = ingestion(
                args.operations,
                args.batch_size,
                args.concurrency,
                args.rounds,
                workdir,
                tuple(args.shapes),
                args.before.resolve() if args.before else None,
                args.neo4j_memory,
            )
            print("ingestion:", figures["ingestion"], flush=True)
        if "subgraph" not in args.skip:
            figures["subgraph"] = subgraph(
                args.small_copies, args.large_copies, args.requests, workdir
            )
            print("subgraph:", figures["subgraph"], flush=True)
    print("written to", save(args.out, figures))
