"""Audit, report and ad-hoc query latency on a large project. Run:
``python -m benchmarks.audits [--quick]``.

1. A fresh Neo4j and the service; synthetic Mem0 and naive-RAG traces at the largest size of the
   attribution benchmark (12 sessions, 1,200 distractor facts: ~3,100 operations each), 12
   conversations per system, all in ONE project (~74k operations, ~140k units).
2. Its failed cases attributed with the heuristic judge over HTTP (``POST /attribute``, two at a
   time; ``--attribute N`` for a sample), so that the reports have data.
3. Over HTTP, one cold request then ``--repetitions`` timed ones each: every audit of
   ``GET /audits`` (first page, default parameters), ``GET /report``, ``GET /report.html`` (by
   day, the default, and by week: the synthetic conversations start a year apart), and
   ``POST /cypher`` with a pinned count, a pinned 2-hop expansion and a refused query (the time
   to refusal: Neo4j plans it, nothing runs).

``--quick``: one conversation per system with 300 distractors (~1,700 operations), 3 repetitions.
Figures (graph size, median/p95 per request) go to ``benchmarks/results/audits.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import os
import tempfile
import time
from datetime import date
from pathlib import Path
from typing import Any

import httpx

from benchmarks.attr_run import Dataset, attribute_all, ingest
from benchmarks.datasets import generate_synthetic
from benchmarks.harness import fresh_neo4j, percentile, save, service_on

PROJECT = "audit-bench"
SYSTEMS = ("mem0", "naive_rag")
SESSIONS, DISTRACTORS = 12, 1_200  # benchmarks.attribution's "large" size
QUICK_DISTRACTORS = 300  # --quick: ~800 operations per conversation

# Ad-hoc queries as a user would send them to POST /cypher ($project is set by the service).
COUNT = "MATCH (o:Operation {project: $project}) RETURN count(o) AS operations"
TWO_HOPS = (
    "MATCH (o:Operation {project: $project, id: $op})-[:CONSUMES]->(u:Unit)"
    "-[:PRODUCED_BY]->(p:Operation) RETURN u.id AS unit, u.kind AS kind, p.id AS producer"
)
REFUSED = "MATCH (u:Unit) WHERE u.content CONTAINS $word RETURN u.id AS unit LIMIT 10"
# Setup only (not timed): the retrieval operation with the most inputs, for TWO_HOPS.
WIDEST_RETRIEVAL = (
    "MATCH (o:Operation {project: $project, kind: 'retrieval'}) "
    "RETURN o.id AS op, COUNT { (o)-[:CONSUMES]->() } AS inputs ORDER BY inputs DESC LIMIT 1"
)
NODES = {
    label: f"MATCH (n:{label} {{project: $project}}) RETURN count(n)"
    for label in ("Operation", "Unit", "Case", "Attribution")
}
# Every relationship starts at a node of the project, so outgoing ones are counted once each.
RELATIONSHIPS = {
    label: f"MATCH (n:{label} {{project: $project}})-[r]->() RETURN count(r)"
    for label in ("Operation", "Unit", "Case", "Attribution")
}


def cypher(client: httpx.Client, query: str, **parameters: Any) -> list[list[Any]]:
    response = client.post(
        "/cypher", params={"project": PROJECT}, json={"query": query, "parameters": parameters}
    )
    if response.status_code != 200:
        raise RuntimeError(f"POST /cypher: {response.status_code} {response.text[:500]}")
    rows: list[list[Any]] = response.json()["rows"]
    return rows


def graph_size(client: httpx.Client) -> dict[str, Any]:
    nodes = {label: cypher(client, q)[0][0] for label, q in NODES.items()}
    relationships = {label: cypher(client, q)[0][0] for label, q in RELATIONSHIPS.items()}
    return {
        "nodes": sum(nodes.values()),
        "relationships": sum(relationships.values()),
        "nodes_by_label": nodes,
        "relationships_by_start_label": relationships,
    }


def timed(
    client: httpx.Client,
    method: str,
    path: str,
    repetitions: int,
    *,
    expect: int = 200,
    json: dict[str, Any] | None = None,
    params: dict[str, str] | None = None,
) -> dict[str, Any]:
    """One cold request, then ``repetitions`` timed ones: milliseconds and what came back."""
    times: list[float] = []
    cold = 0.0
    for i in range(repetitions + 1):
        started = time.perf_counter()
        response = client.request(
            method, path, params={"project": PROJECT, **(params or {})}, json=json
        )
        elapsed = (time.perf_counter() - started) * 1000
        if response.status_code != expect:
            raise RuntimeError(f"{method} {path}: {response.status_code} {response.text[:500]}")
        if i == 0:
            cold = elapsed
        else:
            times.append(elapsed)
    figures: dict[str, Any] = {
        "cold_ms": round(cold, 1),
        "median_ms": round(percentile(times, 50), 1),
        "p95_ms": round(percentile(times, 95), 1),
        "repetitions": repetitions,
        "response_bytes": len(response.content),
    }
    if response.headers.get("content-type", "").startswith("application/json"):
        body = response.json()
        if isinstance(body, dict) and "columns" in body:  # an audit page or a query result
            figures["rows"] = len(body["rows"])
        if isinstance(body, dict) and "next_skip" in body:
            figures["next_skip"] = body["next_skip"]
    return figures


def build(conversations: int, distractors: int, seed: int) -> Dataset:
    batches = generate_synthetic(
        seed,
        systems=SYSTEMS,
        n_conversations=conversations,
        n_sessions=SESSIONS,
        n_distractors=distractors,
        project=PROJECT,
    )
    return Dataset("audit-bench", batches)


def report_span(client: httpx.Client) -> dict[str, Any]:
    """The days the report's trend covers: what the HTML page's time plot draws bars for."""
    trend = client.get("/report", params={"project": PROJECT}).raise_for_status().json()["trend"]
    periods = sorted({row["period"] for row in trend})
    if not periods:
        return {"periods_with_cases": 0}
    first, last = date.fromisoformat(periods[0]), date.fromisoformat(periods[-1])
    return {
        "first": periods[0],
        "last": periods[-1],
        "days": (last - first).days + 1,
        "periods_with_cases": len(periods),
    }


def attribute(url: str, dataset: Dataset, limit: int | None) -> dict[str, Any]:
    cases = dataset.cases()
    sample = cases if limit is None else cases[:: max(1, len(cases) // limit)][:limit]
    records, wall = asyncio.run(attribute_all(url, "heuristic", sample, concurrency=2))
    statuses = collections.Counter(str(r["status"]) for r in records)
    return {
        "failed_cases": len(cases),
        "attributed": len(sample),
        "statuses": dict(statuses),
        "seconds": round(wall, 1),
        "cases_per_s": round(len(sample) / wall, 2),
    }


def measure(client: httpx.Client, repetitions: int) -> dict[str, dict[str, Any]]:
    rows: dict[str, dict[str, Any]] = {}
    names = [a["name"] for a in client.get("/audits").raise_for_status().json()]
    for name in names:
        rows[f"GET /audits/{name}"] = timed(client, "GET", f"/audits/{name}", repetitions)
    rows["GET /report"] = timed(client, "GET", "/report", repetitions)
    rows["GET /report.html"] = timed(client, "GET", "/report.html", repetitions)
    # The page plots one bar per period from the first attributed case to the last.
    week = {"bucket": "week"}
    rows["GET /report.html?bucket=week"] = timed(
        client, "GET", "/report.html", repetitions, params=week
    )
    op = cypher(client, WIDEST_RETRIEVAL)[0][0]
    queries: dict[str, tuple[str, dict[str, Any], int]] = {
        "POST /cypher pinned count": (COUNT, {}, 200),
        "POST /cypher pinned 2-hop": (TWO_HOPS, {"op": op}, 200),
        "POST /cypher refused (400)": (REFUSED, {"word": "Lisbon"}, 400),
    }
    for label, (query, parameters, expect) in queries.items():
        body = {"query": query, "parameters": parameters}
        rows[label] = timed(client, "POST", "/cypher", repetitions, expect=expect, json=body)
    return rows


def table(rows: dict[str, dict[str, Any]]) -> str:
    lines = [f"{'request':42} {'cold ms':>9} {'median ms':>10} {'p95 ms':>9} {'rows':>6}"]
    for label, r in rows.items():
        lines.append(
            f"{label:42} {r['cold_ms']:9.1f} {r['median_ms']:10.1f} {r['p95_ms']:9.1f} "
            f"{r.get('rows', ''):>6}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument(
        "--quick", action="store_true", help="1 small conversation per system, 3 repetitions"
    )
    parser.add_argument("--conversations", type=int, help="per system (12; --quick: 1)")
    parser.add_argument("--repetitions", type=int, help="timed requests each (10; --quick: 3)")
    parser.add_argument("--attribute", type=int, help="attribute only a sample of this many")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    conversations = args.conversations or (1 if args.quick else 12)
    repetitions = args.repetitions or (3 if args.quick else 10)

    print(f"generating {conversations} conversations x {SYSTEMS} ...", flush=True)
    distractors = QUICK_DISTRACTORS if args.quick else DISTRACTORS
    dataset = build(conversations, distractors, args.seed)
    operations = sum(len(b.batch["operations"]) for b in dataset.batches)
    figures: dict[str, Any] = {
        "parameters": {
            "systems": list(SYSTEMS),
            "conversations_per_system": conversations,
            "sessions": SESSIONS,
            "distractors": distractors,
            "repetitions": repetitions,
            "seed": args.seed,
        },
    }
    figures["load_average_at_start"] = os.getloadavg()  # other work on the machine
    with (
        tempfile.TemporaryDirectory() as tmp,
        fresh_neo4j() as local,
        service_on(local, Path(tmp)) as service,
        httpx.Client(base_url=service.url, timeout=600) as client,
    ):
        print(f"ingesting {operations} operations into one project ...", flush=True)
        figures["ingest_seconds"] = round(ingest(client, dataset.batches), 1)
        print(f"  {figures['ingest_seconds']} s; attributing failed cases ...", flush=True)
        figures["attribution"] = attribute(service.url, dataset, args.attribute)
        print(f"  {figures['attribution']}", flush=True)
        figures["graph"] = graph_size(client)
        if figures["graph"]["nodes_by_label"]["Operation"] != operations:
            raise RuntimeError(f"expected {operations} operations: {figures['graph']}")
        print(f"  graph: {figures['graph']}", flush=True)
        figures["requests"] = measure(client, repetitions)
        figures["report_span"] = report_span(client)
        print(f"  report trend: {figures['report_span']}", flush=True)
    figures["load_average_at_end"] = os.getloadavg()
    print(table(figures["requests"]))
    print("written to", save("audits", figures))


if __name__ == "__main__":
    main()
