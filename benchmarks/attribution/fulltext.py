"""Evidence search: the service's Python BM25 over a case's scope beside Neo4j's full-text
(Lucene) index, in one project grown by traces that name no conversation, user or session.

Run: ``python -m benchmarks.attribution fulltext`` (``--sizes 1000,10000`` to try it).

1. Two fresh Neo4j stores, each with the service on it, fed the same bodies in turn (the order
   alternates body by body): the fixed traces and the filler of ``benchmarks.attribution.million``
   (LoCoMo conversation ``--fixed``'s traces, their ids prefixed ``fixed-`` so that no copy's id
   holds one, then copies of every conversation, ``benchmarks.datasets.copies``). One store has
   the full-text index ``cypher/benchmarks/fulltext_index`` (content, project and id of every
   unit, English analyzer), the other has none: ingest ops/s and Neo4j CPU per 1,000 operations
   of each, and the medians over bodies of the indexed store's seconds and CPU over the other's.
2. At each size, on the indexed store, for ``--cases`` fixed failed cases, the query is question
   plus expected answer (the service's seed query) and the top ``K`` in-scope messages are
   compared:

   - today: the case's scope read by the service's own ``scope_messages`` (its graph and scope
     from ``case_graph`` and ``scope_of``, as the engine builds them), ranked in Python by BM25
     (``MessageIndex``, what ``rank_messages`` builds; built each time, uncached);
   - Lucene (``cypher/benchmarks/fulltext_hits``): the index's best ``limit`` hits for
     ``content:(words)`` over the whole project, kept when in the case's scope (today's
     candidates); the same with ``AND project:"..."`` (the project as an indexed field); and
     with the scope's ids in the query (``AND (id:("..." ...))^0``: a filter that adds no score).

   Per path: p50 latency and CPU per query (Neo4j from ``/proc``; Python for BM25), after an
   untimed pass; how many cases' top ``K`` holds the same messages as today's (in any order: the
   engine judges them as one batch), the mean recall of today's top ``K``, how many labelled
   evidence messages are in the top ``K``, how many hits were read to keep ``K`` in scope (p50),
   in how many cases the hits held fewer than ``K`` in scope, and how many cases' top ``K``
   holds other messages than at the first size.

The tables are printed in Markdown after every size; figures go to
``benchmarks/results/attribution_fulltext.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path
from typing import Any

import httpx
from neo4j import AsyncGraphDatabase, AsyncSession, GraphDatabase
from neo4j.exceptions import Neo4jError

from benchmarks.attribution import million
from benchmarks.attribution.run import split_batch
from benchmarks.datasets.copies import copy_batch
from benchmarks.figures import cpu_seconds, save
from cypher import query
from service.attribution import repository as attributions
from service.attribution.graph import CaseGraph
from service.attribution.scope import scope_of
from service.attribution.scope_repository import scope_messages
from service.attribution.search import MessageIndex
from tests.support.servers import fresh_neo4j, run_service

COMMAND = "python -m benchmarks.attribution fulltext"
PROJECT = million.PROJECT
INDEX = "bench_unit_text"  # cypher/benchmarks/fulltext_index
K = 8  # the engine's first round of evidence candidates (SEED_ROUNDS[0])
GRAPH_LIMIT = 20_000  # the service's attribution_graph_limit default
TODAY = "today: scope read + Python BM25"


def words(text: str) -> str:
    """The query's words, lower-cased (so no AND, OR or NOT), without Lucene's special
    characters."""
    return " ".join(re.findall(r"\w+", text.lower()))


def wide(text: str, scope: list[str]) -> str:
    return f"content:({words(text)})"


def by_project(text: str, scope: list[str]) -> str:
    return f'content:({words(text)}) AND project:"{PROJECT}"'


def by_ids(text: str, scope: list[str]) -> str:
    return f"content:({words(text)}) AND (id:({' '.join(json.dumps(i) for i in scope)}))^0"


LUCENE: dict[str, tuple[Callable[[str, list[str]], str], int]] = {
    "Lucene project-wide, 10 hits": (wide, 10),
    "Lucene project-wide, 100 hits": (wide, 100),
    "Lucene project-wide, 1,000 hits": (wide, 1000),
    "Lucene AND project, 1,000 hits": (by_project, 1000),
    "Lucene AND scope ids, 1,000 hits": (by_ids, 1000),
}


@dataclass
class Case:
    """A fixed failed case: its seed query, labelled evidence, and (per size) its candidates."""

    id: str
    query: str
    evidence: list[str]
    candidates: list[str] = field(default_factory=list)


@dataclass
class Store:
    """One Neo4j and its service, with what its ingest has cost since :meth:`reset`."""

    name: str
    url: str
    pid: int
    ops: int = 0
    seconds: float = 0.0
    cpu: float = 0.0
    bodies: list[tuple[float, float]] = field(default_factory=list)  # (seconds, Neo4j CPU s)

    def post(self, client: httpx.Client, body: dict[str, Any]) -> None:
        cpu, started = cpu_seconds(self.pid), time.perf_counter()
        for part in split_batch(body):
            response = client.post(f"{self.url}/traces", json=part)
            if response.status_code != 200:
                raise RuntimeError(f"ingest: {response.status_code} {response.text[:300]}")
        self.bodies.append((time.perf_counter() - started, cpu_seconds(self.pid) - cpu))
        self.seconds += self.bodies[-1][0]
        self.cpu += self.bodies[-1][1]
        self.ops += len(body["operations"])

    def reset(self) -> dict[str, float]:
        out: dict[str, float] = {
            "ops_per_s": round(self.ops / max(self.seconds, 1e-9)),
            "neo4j_cpu_ms_per_1000_ops": round(1e6 * self.cpu / max(self.ops, 1)),
        }
        self.ops, self.seconds, self.cpu, self.bodies = 0, 0.0, 0.0, []
        return out


def ingest(stores: list[Store], bodies: Iterator[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Each body to every store, the order alternating body by body: each store's ops/s and
    Neo4j CPU per 1,000 operations, and the medians over bodies of the first store's seconds and
    CPU over the second's."""
    with httpx.Client(timeout=900) as client:
        for n, body in enumerate(bodies):
            for store in stores if n % 2 == 0 else stores[::-1]:
                store.post(client, body)
    pairs = list(zip(stores[0].bodies, stores[1].bodies, strict=True))
    out: dict[str, dict[str, float]] = {store.name: store.reset() for store in stores}
    out["median_ratio"] = {
        "seconds": round(statistics.median(a[0] / max(b[0], 1e-9) for a, b in pairs), 2),
        "neo4j_cpu": round(statistics.median(a[1] / max(b[1], 1e-9) for a, b in pairs), 2),
        "bodies": len(pairs),
    }
    return out


def fixed_traces(found: million.Traces) -> tuple[list[dict[str, Any]], list[Case]]:
    """The fixed traces under ids prefixed ``fixed-`` and their chosen cases."""
    batches = [copy_batch(b, "fixed") for b in found.fixed]
    by_id = {c["id"]: c for b in batches for c in b["cases"]}
    cases = [by_id[f"fixed-{c}"] for c in found.cases]
    return batches, [
        Case(c["id"], f"{c['question']} {c['expected_answer']}", c.get("evidence_units") or [])
        for c in cases
    ]


class Clock:
    """Latencies and the CPU of Neo4j and of this process over the timed passes of one path."""

    def __init__(self, neo4j: int) -> None:
        self.neo4j, self.latencies = neo4j, list[float]()
        self.marks = (cpu_seconds(neo4j), time.process_time())

    def figures(self) -> dict[str, float]:
        n = max(len(self.latencies), 1)
        return {
            "p50_ms": round(statistics.median(self.latencies), 1),
            "neo4j_cpu_ms": round(1000 * (cpu_seconds(self.neo4j) - self.marks[0]) / n, 1),
            "python_cpu_ms": round(1000 * (time.process_time() - self.marks[1]) / n, 1),
        }


async def today(
    session: AsyncSession, cases: list[Case], repeats: int, neo4j: int
) -> tuple[dict[str, Any], dict[str, list[str]]]:
    """The service's path: scope read, then BM25 in Python; fills each case's candidates."""
    graphs: dict[str, tuple[CaseGraph, Any]] = {}
    for case in cases:
        inputs = await attributions.case_graph(session, PROJECT, case.id, GRAPH_LIMIT)
        assert inputs.case is not None and inputs.case.answer_unit is not None
        graph = CaseGraph()
        graph.add(inputs.ancestors)
        answer = inputs.case.answer_unit
        graphs[case.id] = (graph, scope_of(graph, answer, graph.producers[answer][0]))
    ranked: dict[str, list[str]] = {}
    read_clock, rank_clock = Clock(neo4j), Clock(neo4j)
    for timed in range(repeats + 1):
        if timed == 1:  # pass 0 is untimed: the clocks start after it
            read_clock, rank_clock = Clock(neo4j), Clock(neo4j)
        for case in cases:
            graph, scope = graphs[case.id]
            started = time.perf_counter()
            read = await scope_messages(session, PROJECT, scope, GRAPH_LIMIT)
            read_clock.latencies.append(1000 * (time.perf_counter() - started))
            started = time.perf_counter()
            graph.add_units(read.nodes)
            candidates = sorted({m.id for m in read.nodes} | set(scope.lineage))
            texts = [(m, graph.units[m].text()) for m in candidates if m in graph.units]
            ranked[case.id] = MessageIndex(texts).rank(case.query, K)
            rank_clock.latencies.append(1000 * (time.perf_counter() - started))
            case.candidates = candidates
    read_figures, rank_figures = read_clock.figures(), rank_clock.figures()
    return {
        "scope_read": read_figures,
        "bm25": rank_figures,
        "scope_messages_p50": statistics.median(len(c.candidates) for c in cases),
    }, ranked


async def lucene(
    session: AsyncSession, cases: list[Case], repeats: int, neo4j: int, name: str
) -> tuple[dict[str, Any], dict[str, list[str]], dict[str, int | None]]:
    """One Lucene path: its figures, its in-scope top ``K`` and hits needed per case."""
    build, limit = LUCENE[name]
    statement = query("benchmarks/fulltext_hits")
    ranked: dict[str, list[str]] = {}
    needed: dict[str, int | None] = {}
    clock = Clock(neo4j)
    for timed in range(repeats + 1):
        if timed == 1:  # pass 0 is untimed: the clock starts after it
            clock = Clock(neo4j)
        for case in cases:
            text = build(case.query, case.candidates)
            started = time.perf_counter()
            result = await session.run(
                statement, index=INDEX, lucene=text, limit=limit, scope=case.candidates, k=K
            )
            record = await result.single()
            clock.latencies.append(1000 * (time.perf_counter() - started))
            assert record is not None
            ranked[case.id], needed[case.id] = list(record["ids"]), record["needed"]
    return clock.figures(), ranked, needed


def compare(
    cases: list[Case],
    ranked: dict[str, list[str]],
    reference: dict[str, list[str]],
    first: dict[str, list[str]] | None,
) -> dict[str, Any]:
    """A ranking's in-scope top ``K`` beside today's, the labels and the first size's; two top
    ``K`` are the same when they hold the same messages (the engine judges them as one batch)."""
    recalls = [
        len(set(ranked[c.id]) & set(reference[c.id])) / len(reference[c.id])
        for c in cases
        if reference[c.id]
    ]
    return {
        "same_top_k_as_today": sum(set(ranked[c.id]) == set(reference[c.id]) for c in cases),
        "recall_of_today": round(statistics.mean(recalls), 3) if recalls else None,
        "evidence_in_top_k": sum(len(set(ranked[c.id]) & set(c.evidence)) for c in cases),
        "fewer_than_today": sum(len(ranked[c.id]) < len(reference[c.id]) for c in cases),
        "changed_since_first_size": (
            sum(set(ranked[c.id]) != set(first[c.id]) for c in cases) if first is not None else 0
        ),
    }


async def search_row(
    uri: str, cases: list[Case], repeats: int, neo4j: int, first: dict[str, Any] | None
) -> tuple[dict[str, Any], dict[str, dict[str, list[str]]]]:
    """Step 2 at one size: every path's figures, and every path's rankings."""
    driver = AsyncGraphDatabase.driver(uri, auth=("neo4j", "unused"))
    try:
        async with driver.session() as session:
            figures, reference = await today(session, cases, repeats, neo4j)
            rankings = {TODAY: reference}
            paths: dict[str, Any] = {
                TODAY: {**compare(cases, reference, reference, (first or {}).get(TODAY))}
            }
            for name in LUCENE:
                try:
                    measured, ranked, needed = await lucene(session, cases, repeats, neo4j, name)
                except Neo4jError as e:  # e.g. a query over Lucene's clause limit
                    paths[name] = {"error": f"{e.code}: {e.message}"[:300]}
                    continue
                rankings[name] = ranked
                found = [n for n in needed.values() if n is not None]
                paths[name] = {
                    **measured,
                    **compare(cases, ranked, reference, (first or {}).get(name)),
                    "hits_read_for_k_p50": statistics.median(found) if found else None,
                    "cases_short_of_k": len(needed) - len(found),
                }
    finally:
        await driver.close()
    return {**figures, "paths": paths}, rankings


def _cell(value: Any) -> str:
    return "–" if value is None else f"{value:,}" if isinstance(value, int) else str(value)


def tables(rows: list[dict[str, Any]], cases: int, evidence: int) -> str:
    """The search table (a row per path and size) and the ingest table (a row per step)."""
    head = (
        "| path | ops | p50 ms | Neo4j CPU ms / query | same top-8 as today "
        f"(of {cases}) | recall of today's top-8 | evidence in top-8 (of {evidence}) "
        "| hits read for 8 in scope (p50) | cases short of 8 in scope "
        "| top-8 changed since first size |"
    )
    lines = [head, "|---" * 10 + "|"]
    for name in [TODAY, *LUCENE]:
        for row in rows:
            path = row["search"]["paths"][name]
            if name == TODAY:
                read, bm25 = row["search"]["scope_read"], row["search"]["bm25"]
                ms = f"{read['p50_ms']} + {bm25['p50_ms']}"
                cpu = f"{read['neo4j_cpu_ms']} (+ {bm25['python_cpu_ms']} Python)"
            else:
                ms, cpu = str(path["p50_ms"]), str(path["neo4j_cpu_ms"])
            cells = [
                name,
                f"{row['operations']:,}",
                ms,
                cpu,
                _cell(path["same_top_k_as_today"]),
                _cell(path["recall_of_today"]),
                _cell(path["evidence_in_top_k"]),
                _cell(path.get("hits_read_for_k_p50")),
                _cell(path.get("cases_short_of_k")),
                _cell(path["changed_since_first_size"]),
            ]
            lines.append("| " + " | ".join(cells) + " |")
    lines += [
        "",
        "| step (ops) | ops/s with / without the index | Neo4j CPU ms per 1,000 ops "
        "with / without | median per body of seconds, CPU with / without |",
        "|---|---|---|---|",
    ]
    for row, before in zip(rows, [0, *(r["operations"] for r in rows)], strict=False):
        i, p, r = (row["ingest"][k] for k in ("fulltext", "plain", "median_ratio"))
        lines.append(
            f"| {before:,} to {row['operations']:,} | {i['ops_per_s']:,} / {p['ops_per_s']:,} "
            f"| {i['neo4j_cpu_ms_per_1000_ops']:,} / {p['neo4j_cpu_ms_per_1000_ops']:,} "
            f"| {r['seconds']}, {r['neo4j_cpu']} ({r['bodies']:.0f} bodies) |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--sizes", type=million._sizes, default=million._sizes("1000,10000,100000"))
    parser.add_argument("--locomo", default="../shared/data/locomo10")
    parser.add_argument("--fixed", default="26", help="the fixed cases' LoCoMo conversation")
    parser.add_argument("--cases", type=int, default=30, help="fixed failed cases")
    parser.add_argument("--repeats", type=int, default=3, help="timed passes per path")
    parser.add_argument("--batch-ops", type=int, default=2000, help="operations per POST body")
    parser.add_argument("--neo4j-memory", default="1g", help="each Neo4j's heap and page cache")
    args = parser.parse_args(argv)
    args.conversation_ids, args.filler_search, args.filler_cases = False, "top_k", "none"
    found = million.traces(args)
    fixed, cases = fixed_traces(found)
    figures: dict[str, Any] = {
        "command": " ".join([COMMAND, *(sys.argv[1:] if argv is None else argv)]),
        "cases": len(cases),
        "evidence_messages": sum(len(c.evidence) for c in cases),
        "k": K,
        "load_average_at_start": list(os.getloadavg()),
    }
    rows: list[dict[str, Any]] = []
    first: dict[str, Any] | None = None
    started = time.perf_counter()
    with ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        stores = []
        for name in ("fulltext", "plain"):
            neo4j = stack.enter_context(
                fresh_neo4j(heap=args.neo4j_memory, pagecache=args.neo4j_memory)
            )
            service = stack.enter_context(run_service(neo4j.uri, tmp, ready_s=300))
            pid = neo4j.pid()
            assert pid is not None
            stores.append(Store(name, service.url, pid))
            if name == "fulltext":
                uri, neo4j_pid = neo4j.uri, pid
                with GraphDatabase.driver(uri, auth=("neo4j", "unused")) as driver:
                    driver.execute_query(query("benchmarks/fulltext_index"))
                    driver.execute_query(query("schema/await_indexes"))
        filler, held = million.Filler(found, args.batch_ops, False), 0
        for size in args.sizes:
            first_step, held = held == 0, held or sum(len(b["operations"]) for b in fixed)
            step = ingest(stores, chain(fixed if first_step else [], filler.bodies(size - held)))
            held = size
            search, rankings = asyncio.run(search_row(uri, cases, args.repeats, neo4j_pid, first))
            first = first or rankings
            rows.append({"operations": size, "ingest": step, "search": search})
            rows[-1]["load_average"] = list(os.getloadavg())
            figures["rows"] = rows
            save("attribution_fulltext", figures)
            print(tables(rows, len(cases), figures["evidence_messages"]), flush=True)
    figures["seconds"] = round(time.perf_counter() - started)
    figures["load_average_at_end"] = list(os.getloadavg())
    path = save("attribution_fulltext", figures)
    print(f"run took {figures['seconds']} s; written to {path}", flush=True)


if __name__ == "__main__":
    main()
