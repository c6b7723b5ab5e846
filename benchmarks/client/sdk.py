"""Python SDK benchmarks (``memtrace_client``). Run: ``python -m benchmarks.client [--quick]``.

1. Caller overhead: time per ``tracer.record_operation`` and per ``with tracer.operation(...)``,
   each with two unit helpers (one message in, one memory out), and per unit helper alone,
   against a ``MemTraceClient`` whose transport answers 200 at once (``httpx.MockTransport``):
   only the SDK is measured, its background worker included (it shares the GIL with the caller).
2. End-to-end delivery to a real service and Neo4j: N operations recorded as fast as possible,
   then ``flush()``; records/s and operations/s delivered, against the same records sent as
   pre-built batches of the same size through ``MemTraceClient.send``.
3. Spool replay: N operations recorded while the service is down (a port nothing listens on)
   into a disk spool; then a new tracer on the same spool, pointed at the service, replays it:
   once left to its background worker, once with ``flush()``.

``--quick``: 3,000 calls per form and 2,000 operations (about a minute and a half).

After 2 and 3 the operations stored in Neo4j are counted (``POST /cypher``): exactly N each.
Figures go to ``benchmarks/results/client.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
from memtrace_client import MemTraceClient, TraceBatch, Tracer

from benchmarks.figures import percentile, save
from tests.support.servers import free_port, fresh_neo4j, run_service

MAX_ITEMS = 500  # the tracer's default records per batch; the direct batches copy it
COUNT_OPERATIONS = "MATCH (o:Operation {project: $project}) RETURN count(o) AS operations"


def message_text(i: int) -> str:
    return f"turn {i}: I moved to Lisbon in May and started a new job at the observatory"


def memory_text(i: int) -> str:
    return f"fact {i}: the user moved to Lisbon in May 2023 and works at the observatory"


# -- 1. caller overhead ---------------------------------------------------------------------------


def _instant_ok(request: httpx.Request) -> httpx.Response:
    """What the service would answer, without reading the batch."""
    empty = {"units": 0, "operations": 0, "cases": 0}
    return httpx.Response(200, json={"project": "bench", "created": empty, "existing": empty})


def _timed(calls: int, call: Callable[[int], None]) -> dict[str, Any]:
    """Per-call times of ``call(i)`` for i in range(calls), and the loop's overall rate."""
    per_call: list[float] = []
    clock = time.perf_counter_ns
    started = clock()
    for i in range(calls):
        t0 = clock()
        call(i)
        per_call.append((clock() - t0) / 1000)
    wall_s = (clock() - started) / 1e9
    return {
        "calls": calls,
        "median_us": round(statistics.median(per_call), 1),
        "p95_us": round(percentile(per_call, 95), 1),
        "p99_us": round(percentile(per_call, 99), 1),
        "max_us": round(max(per_call), 1),
        "calls_per_s": round(calls / wall_s),
    }


def caller_overhead(calls: int) -> dict[str, Any]:
    figures: dict[str, Any] = {}
    forms: dict[str, Callable[[Tracer], Callable[[int], None]]] = {
        "record_operation": lambda t: lambda i: record_one(t, i),
        "with_operation": lambda t: lambda i: operate_one(t, i),
        "unit_helper_alone": lambda t: lambda i: memory_one(t, i),
    }
    records_per_call = {"record_operation": 3, "with_operation": 3, "unit_helper_alone": 1}
    for name, form in forms.items():
        client = MemTraceClient(
            "http://memtrace.invalid", project="bench", transport=httpx.MockTransport(_instant_ok)
        )
        tracer = Tracer(client, system="bench", session_id="s1")
        record_one(tracer, -1)  # imports, first batch, connection pool
        tracer.flush()
        figures[name] = _timed(calls, form(tracer))
        started = time.perf_counter()
        delivered = tracer.flush(timeout_s=120)
        figures[name]["flush_after_s"] = round(time.perf_counter() - started, 3)
        stats = tracer.delivery.stats
        if not delivered or stats.sent_records != 3 + records_per_call[name] * calls:
            raise RuntimeError(f"{name}: {stats} after {calls + 1} operations")
        figures[name]["sent_batches"] = stats.sent_batches
        tracer.close()
        client.close()
        print(f"  {name:17} {figures[name]}", flush=True)
    return figures


def record_one(tracer: Tracer, i: int) -> None:
    turn = tracer.message(message_text(i), role="user")
    fact = tracer.memory(memory_text(i), memory_id=f"m{i}")
    tracer.record_operation("extract_facts", kind="extraction", inputs=[turn], outputs=[fact])


def memory_one(tracer: Tracer, i: int) -> None:
    tracer.memory(memory_text(i), memory_id=f"m{i}")


def operate_one(tracer: Tracer, i: int) -> None:
    turn = tracer.message(message_text(i), role="user")
    with tracer.operation("extract_facts", kind="extraction", inputs=[turn]) as op:
        op.output(tracer.memory(memory_text(i), memory_id=f"m{i}"))


# -- 2. end-to-end delivery -----------------------------------------------------------------------


def direct_batches(project: str, n_ops: int) -> list[TraceBatch]:
    """The tracer's records (message, memory, operation per step) cut every ``MAX_ITEMS``
    records as its worker cuts them, validated beforehand: only sending is timed."""
    ts = "2026-01-01T00:00:00Z"
    records: list[tuple[str, dict[str, Any]]] = []
    for i in range(n_ops):
        msg, mem = f"{project}-msg-{i}", f"{project}-mem-{i}"
        records.append(
            ("units", {"id": msg, "kind": "message", "content": message_text(i), "ts": ts})
        )
        records.append(
            ("units", {"id": mem, "kind": "memory", "content": memory_text(i), "ts": ts})
        )
        records.append(
            (
                "operations",
                {
                    "id": f"{project}-op-{i}",
                    "name": "extract_facts",
                    "kind": "extraction",
                    "system": "bench",
                    "session_id": "s1",
                    "ts": ts,
                    "inputs": [msg],
                    "outputs": [mem],
                },
            )
        )
    batches = []
    for start in range(0, len(records), MAX_ITEMS):
        parts: dict[str, list[dict[str, Any]]] = {"units": [], "operations": []}
        for part, record in records[start : start + MAX_ITEMS]:
            parts[part].append(record)
        batches.append(TraceBatch.model_validate({"project": project, **parts}))
    return batches


def count_operations(url: str, project: str) -> int:
    response = httpx.post(
        f"{url}/cypher", params={"project": project}, json={"query": COUNT_OPERATIONS}, timeout=60
    )
    response.raise_for_status()
    return int(response.json()["rows"][0][0])


def delivered(url: str, project: str, n_ops: int) -> int:
    stored = count_operations(url, project)
    print(f"    {project}: {stored} operations in Neo4j (expected {n_ops})", flush=True)
    if stored != n_ops:
        raise RuntimeError(f"{project}: {stored} operations stored, {n_ops} recorded")
    return stored


def end_to_end(url: str, n_ops: int) -> dict[str, Any]:
    # Warm the service and Neo4j (query plans, JIT) before either path is timed.
    with MemTraceClient(url, project="warm-up") as client:
        for batch in direct_batches("warm-up", 1_000):
            client.send(batch)

    batches = direct_batches("direct", n_ops)
    with MemTraceClient(url, project="direct") as client:
        started = time.perf_counter()
        for batch in batches:
            client.send(batch)
        direct_s = time.perf_counter() - started
    direct_stored = delivered(url, "direct", n_ops)

    with MemTraceClient(url, project="tracer") as client:
        tracer = Tracer(client, system="bench", session_id="s1")
        started = time.perf_counter()
        for i in range(n_ops):
            record_one(tracer, i)
        recorded_s = time.perf_counter() - started
        if not tracer.flush(timeout_s=None):
            raise RuntimeError(f"tracer flush failed: {tracer.delivery.stats}")
        tracer_s = time.perf_counter() - started
        stats = tracer.delivery.stats
        tracer.close()
    tracer_stored = delivered(url, "tracer", n_ops)
    records = 3 * n_ops
    return {
        "operations": n_ops,
        "records": records,
        "records_per_operation": "1 message + 1 memory + 1 operation",
        "tracer": {
            "recording_seconds": round(recorded_s, 2),
            "seconds_to_stored": round(tracer_s, 2),
            "records_per_s": round(records / tracer_s),
            "ops_per_s": round(n_ops / tracer_s),
            "batches": stats.sent_batches,
            "operations_in_neo4j": tracer_stored,
        },
        "direct_send": {
            "batches": len(batches),
            "records_per_batch": MAX_ITEMS,
            "seconds": round(direct_s, 2),
            "records_per_s": round(records / direct_s),
            "ops_per_s": round(n_ops / direct_s),
            "operations_in_neo4j": direct_stored,
        },
        "tracer_to_direct_ratio": round(direct_s / tracer_s, 3),
    }


# -- 3. spool replay ------------------------------------------------------------------------------


def spool_while_down(spool: Path, project: str, n_ops: int) -> dict[str, Any]:
    """Record into a tracer whose service is down; everything ends up in the disk spool."""
    down = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    with MemTraceClient(down, project=project, attempts=1) as client:
        tracer = Tracer(client, system="bench", session_id="s1", spool_dir=spool)
        started = time.perf_counter()
        for i in range(n_ops):
            record_one(tracer, i)
        recorded_s = time.perf_counter() - started
        tracer.flush(timeout_s=0)  # cut the last batch now rather than after flush_interval_s
        # flush() cannot tell "spooled" from "sent" (it waits for both); the queue's count of
        # unfinished records can: 0 once the worker has written every batch to disk.
        while tracer.delivery._queue.unfinished_tasks:
            time.sleep(0.005)
        spooled_s = time.perf_counter() - started
        tracer.close(timeout_s=0.1)
        stats = tracer.delivery.stats
    files = sum(1 for _ in spool.rglob("*.json"))
    if stats.sent_batches or stats.dropped_records or files != stats.spooled_batches:
        raise RuntimeError(f"spooling went wrong: {stats}, {files} files")
    return {
        "recording_seconds": round(recorded_s, 2),
        "seconds_until_all_spooled": round(spooled_s, 2),
        "spooled_batches": files,
        "spool_bytes": sum(p.stat().st_size for p in spool.rglob("*.json")),
    }


def replay(url: str, spool: Path, project: str, n_ops: int, flush: bool) -> dict[str, Any]:
    """A new tracer (a restarted process) on the same spool, pointed at the running service."""
    with MemTraceClient(url, project=project) as client:
        started = time.perf_counter()
        tracer = Tracer(client, system="bench", session_id="s1", spool_dir=spool)
        if flush:
            if not tracer.flush(timeout_s=None):
                raise RuntimeError(f"replay flush failed: {tracer.delivery.stats}")
        else:
            while tracer.delivery.pending_batches:
                time.sleep(0.02)
        drain_s = time.perf_counter() - started
        batches = tracer.delivery.stats.sent_batches
        tracer.close()
    stored = delivered(url, project, n_ops)
    return {
        "replayed_batches": batches,
        "seconds_to_drain": round(drain_s, 2),
        "ops_per_s": round(n_ops / drain_s),
        "records_per_s": round(3 * n_ops / drain_s),
        "operations_in_neo4j": stored,
    }


def spool_replay(url: str, n_ops: int, workdir: Path) -> dict[str, Any]:
    figures: dict[str, Any] = {"operations": n_ops}
    for mode, flush in (("background", False), ("flush", True)):
        spool = workdir / f"spool-{mode}"
        project = f"spool-{mode}"
        down = spool_while_down(spool, project, n_ops)
        up = replay(url, spool, project, n_ops, flush)
        figures[mode] = {"while_down": down, "replay": up}
        print(f"  spool/{mode:10} down {down}\n  {'':17} replay {up}", flush=True)
    return figures


# -- main -----------------------------------------------------------------------------------------


@contextmanager
def service() -> Iterator[str]:
    with (
        tempfile.TemporaryDirectory() as tmp,
        fresh_neo4j() as local,
        run_service(local.uri, Path(tmp)) as handle,
    ):
        yield handle.url


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes: well under 2 minutes")
    parser.add_argument("--calls", type=int, help="calls per form in part 1 (20,000)")
    parser.add_argument("--operations", type=int, help="operations in parts 2 and 3 (20,000)")
    args = parser.parse_args(argv)
    calls = args.calls or (3_000 if args.quick else 20_000)
    n_ops = args.operations or (2_000 if args.quick else 20_000)
    figures: dict[str, Any] = {"parameters": {"calls": calls, "operations": n_ops}}
    figures["load_average_at_start"] = os.getloadavg()  # other work on the machine

    print(f"caller overhead, {calls} calls per form (MockTransport) ...", flush=True)
    figures["caller_overhead"] = caller_overhead(calls)
    with service() as url, tempfile.TemporaryDirectory() as tmp:
        print(f"end to end, {n_ops} operations ...", flush=True)
        figures["end_to_end"] = end_to_end(url, n_ops)
        print(f"  {json.dumps(figures['end_to_end'])}", flush=True)
        print(f"spool replay, {n_ops} operations ...", flush=True)
        figures["spool_replay"] = spool_replay(url, n_ops, Path(tmp))
    figures["load_average_at_end"] = os.getloadavg()
    print("written to", save("client", figures))
