"""What each part of the service's graph costs a batch beyond the minimal graph's: written by
plain ``CREATE`` statements (the ``limit`` and ``minimal`` paths of ``benchmarks.ingest
throughput``), in one Neo4j. Built up from the minimal graph: ``+derived`` adds the properties
the service derives (fingerprints, ``defined``, the two marks), ``+reverse`` the reverse
``PRODUCED_BY`` edges too, ``-all`` is the service's graph without its secondary indexes (the
same as ``+reverse`` under the service's labels), ``full`` the service's graph; then ``full``
without each secondary index in turn.

Run: ``python -m benchmarks.ingest ablation`` (``--operations 8000 --rounds 4`` by default).

Every variant writes its own project, one shape at a time (``--shapes``), taking turns round by
round as ``throughput``'s paths do, so that a change of the machine's load falls on each alike.
A variant ``-NAME`` drops the index ``NAME`` (``cypher/benchmarks/drop_index``) before its turn
and creates it again from ``cypher/schema/`` after, untimed; ``-all`` drops every one in
``INDEXES``. Only indexes that hold entries for these traces are listed: a composite range
index holds a node only when every one of its properties is set, so the scope-name indexes
(``conversation_id``, ``user_id``, ``store_id``) and ``memory_id`` cost nothing for a trace that
names none. Prints, per shape, each variant's ms per batch and its ratio to ``full`` and to
the minimal graph; figures go to ``benchmarks/results/ingest_ablation.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

from neo4j import AsyncDriver, AsyncManagedTransaction, AsyncSession

from benchmarks.figures import save
from benchmarks.ingest.throughput import (
    PLAIN,
    limit_rows,
    minimal_schema,
    shape_streams,
    turns,
    write_all,
)
from cypher import query
from service.db import apply_schema, create_driver
from service.settings import Settings
from tests.support.servers import fresh_neo4j

COMMAND = "python -m benchmarks.ingest ablation"

INDEXES = {
    "unit_kind": "schema/unit_kind_index",
    "unit_kind_id": "schema/unit_kind_id_index",
    "unit_defined": "schema/unit_defined_index",
    "unit_reach": "schema/unit_reach_index",
    "operation_kind": "schema/operation_kind_index",
    "operation_time": "schema/operation_time_index",
    "operation_session": "schema/operation_session_index",
    "operation_session_time": "schema/operation_session_time_index",
    "operation_rewrites": "schema/operation_rewrites_index",
}
"""The secondary indexes that hold an entry for every unit or operation these traces write,
each with the statement that creates it."""


BUILT_UP = ("minimal", "+derived", "+reverse", "-all", "full")
"""From the minimal graph to the service's, a part at a time."""


def variants() -> list[str]:
    return [*BUILT_UP, *(f"-{name}" for name in INDEXES)]


def dropped(variant: str) -> list[str]:
    if variant == "-all":
        return list(INDEXES)
    return [variant[1:]] if variant.startswith("-") else []


async def _set_indexes(driver: AsyncDriver, drop: list[str], create: list[str]) -> None:
    for name in drop:
        await driver.execute_query(query("benchmarks/drop_index"), name=name, database_="neo4j")
    for name in create:
        await driver.execute_query(query(INDEXES[name]), database_="neo4j")
    await driver.execute_query(query("schema/await_indexes"), database_="neo4j")


async def _derived_write(
    tx: AsyncManagedTransaction, project: str, rows: dict[str, Any], reverse: bool
) -> None:
    if rows["seeds"]:
        await tx.run(query("benchmarks/minimal_unit_refs"), project=project, ids=rows["seeds"])
    await tx.run(query("benchmarks/minimal_units_derived"), project=project, rows=rows["units"])
    statement = query("benchmarks/minimal_operations_derived")
    await tx.run(statement, project=project, rows=rows["operations"], reverse=reverse)


def _derived(reverse: bool) -> Callable[[AsyncSession, dict[str, Any]], Awaitable[None]]:
    async def write(session: AsyncSession, batch: dict[str, Any]) -> None:
        rows = limit_rows(batch)
        await session.execute_write(_derived_write, batch["project"], rows, reverse)

    return write


WRITERS = {"minimal": PLAIN["minimal"], "+derived": _derived(False), "+reverse": _derived(True)}
"""The variants on the minimal graph's labels; the others write the service's graph."""


def ablation(n_ops: int, rounds: int, shapes: list[str], neo4j_memory: str) -> dict[str, Any]:
    names = variants()
    seconds = {(shape, v): 0.0 for shape in shapes for v in names}
    streams = {
        (shape, v): shape_streams(shape, f"{shape}{v}", n_ops, 1000, 1)
        for shape in shapes
        for v in names
    }
    with fresh_neo4j(neo4j_memory, neo4j_memory, start_s=600) as local:
        loop = asyncio.new_event_loop()
        settings = Settings(neo4j_uri=local.uri)
        driver = create_driver(settings)
        loop.run_until_complete(apply_schema(driver, settings.neo4j_database))
        loop.run_until_complete(minimal_schema(driver))

        def write(variant: str, chunk: list[list[dict[str, Any]]]) -> float:
            plain: Callable[[AsyncSession, dict[str, Any]], Awaitable[None]]
            plain = WRITERS.get(variant, PLAIN["limit"])
            loop.run_until_complete(_set_indexes(driver, dropped(variant), []))
            started = time.perf_counter()
            loop.run_until_complete(write_all(driver, chunk, plain))
            took = time.perf_counter() - started
            loop.run_until_complete(_set_indexes(driver, [], dropped(variant)))
            return took

        for shape in shapes:  # untimed: the JVM's warm-up and first plans
            for v in names:
                write(v, shape_streams(shape, f"warm-{shape}{v}", 1000, 1000, 1))
        for r in range(rounds):
            for shape in shapes:
                for i in turns(len(names), r):
                    v = names[i]
                    s = streams[shape, v]
                    chunk = [s[0][len(s[0]) * r // rounds : len(s[0]) * (r + 1) // rounds]]
                    seconds[shape, v] += write(v, chunk)
            print(f"round {r + 1}/{rounds}", flush=True)
        loop.run_until_complete(driver.close())
        loop.close()
    n_batches = n_ops // 1000
    figures: dict[str, Any] = {"operations_per_variant": n_ops, "rounds": rounds}
    for shape in shapes:
        full, minimal = seconds[shape, "full"], seconds[shape, "minimal"]
        figures[shape] = {
            v: {
                "ms_per_batch": round(seconds[shape, v] / n_batches * 1000, 1),
                "full_over_this": round(full / seconds[shape, v], 3),
                "minimal_over_this": round(minimal / seconds[shape, v], 3),
            }
            for v in names
        }
    return figures


def table(figures: dict[str, Any], shapes: list[str]) -> str:
    lines = [
        "| variant | "
        + " | ".join(f"{s} ms/batch | {s} vs full | {s} minimal/this" for s in shapes)
        + " |",
        "|---" * (1 + 3 * len(shapes)) + "|",
    ]
    for v in variants():
        cells = []
        for s in shapes:
            f = figures[s][v]
            cells += [
                str(f["ms_per_batch"]),
                f"{1 / f['full_over_this']:.2f}",
                f"{f['minimal_over_this']:.2f}",
            ]
        lines.append(f"| {v} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--operations", type=int, default=8_000, help="per variant and shape")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument(
        "--shapes", nargs="+", choices=["chain", "extraction"], default=["chain", "extraction"]
    )
    parser.add_argument("--neo4j-memory", default="1g")
    parser.add_argument("--out", default="ingest_ablation")
    args = parser.parse_args(argv)
    figures = ablation(args.operations, args.rounds, args.shapes, args.neo4j_memory)
    print(table(figures, args.shapes))
    figures["command"] = " ".join([COMMAND, *(sys.argv[1:] if argv is None else argv)])
    print("written to", save(args.out, figures))
