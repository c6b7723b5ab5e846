"""Audit, report, ancestry and ad-hoc query latency on a project at two sizes. Run:
``python -m benchmarks.audits latency [--quick]``.

1. A fresh Neo4j and the service; synthetic Mem0 and naive-RAG traces at the largest size of the
   attribution benchmark (12 sessions, 1,200 distractor facts: ~3,100 operations each), all in
   ONE project, grown in two steps: ``--small`` conversations per system (1: ~6k operations),
   measured, then grown to ``--conversations`` per system (12: ~74k operations, ~140k units),
   measured again. The figures of both sizes and their ratio (large / small) are printed.
2. At each size, failed cases attributed with the heuristic judge over HTTP (``POST
   /attribute``, two at a time; ``--attribute N`` per step, a sample), so that reports have data.
3. Over HTTP, one cold request then ``--repetitions`` timed ones each: every audit of
   ``GET /audits`` (first page, default parameters; and a first page of ``EQUAL_PAGE`` rows,
   the same size at both project sizes), ``GET /report``, ``GET /report.html`` (by
   day, the default, and by week: the synthetic conversations start a year apart), ``GET
   /cases/{id}/subgraph`` of the case whose ancestry is nearest 1,000 nodes, and ``POST
   /cypher`` with a pinned count, a pinned 2-hop expansion and a refused query (the time to
   refusal: Neo4j plans it, nothing runs).
4. At each size, every audit's statement as it was at ``--baseline-ref`` (git) and as it is now
   run over the whole project with the parameters the service would pass, their rows finished
   by the audit's Python filter: the two must be the same rows in the same order (else the run
   fails). A row's ``evidence`` list is compared as a set: the old statement left its order to
   the plan.

``--quick``: conversations of 300 distractors (~800 operations each), 3 repetitions.
Figures go to ``benchmarks/results/audits_latency.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import os
import subprocess
import tempfile
import time
from datetime import date
from pathlib import Path
from typing import Any

import httpx
from neo4j import Driver, GraphDatabase

from benchmarks.attribution.run import Dataset, attribute_all, ingest
from benchmarks.datasets import generate_synthetic
from benchmarks.figures import percentile, save
from cypher import query as statement_text
from service.audits.catalogue import AUDITS
from service.audits.words import answer_needles
from tests.support.servers import REPO, fresh_neo4j, run_service

PROJECT = "audit-bench"
BASELINE_REF = "8ae467d"  # main before the audits walked their indexes in order (issue 14)
ANCESTRY_NODES = 1_000
EQUAL_PAGE = 2  # rows (candidates, for the audits that filter) in the same-size first pages
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
    if not cases:
        return {"failed_cases": 0, "attributed": 0}
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


def ancestry_case(driver: Driver) -> tuple[str, int]:
    """The failed case whose answer's ancestry is nearest ``ANCESTRY_NODES`` nodes (setup, not
    timed; counted on Neo4j directly, an unbounded walk POST /cypher would rightly refuse)."""
    records, _, _ = driver.execute_query(
        "MATCH (c:Case {project: $project})-[:ANSWERED_BY]->(a:Unit) "
        "RETURN c.id AS id, COUNT { MATCH (a)-[:PRODUCED_BY|CONSUMES*0..]->(x) "
        "RETURN DISTINCT x } AS nodes",
        project=PROJECT,
        database_="neo4j",
    )
    best = min(records, key=lambda r: (abs(r["nodes"] - ANCESTRY_NODES), r["id"]))
    return str(best["id"]), int(best["nodes"])


def _statement_rows(driver: Driver, text: str, params: dict[str, Any]) -> list[dict[str, Any]]:
    records, _, _ = driver.execute_query(
        text,
        # Every failed case as the window of the cursor-paged audits (ignored by the others).
        {**params, "skip": 0, "limit": 10_000_000, "first_case": "", "last_case": "\U0010ffff"},
        database_="neo4j",
        routing_="r",
    )
    return [r.data() for r in records]


def _comparable(row: dict[str, Any]) -> dict[str, Any]:
    if isinstance(row.get("evidence"), list):
        return {**row, "evidence": sorted(row["evidence"])}
    return row


def same_rows_as_baseline(driver: Driver, ref: str) -> dict[str, Any]:
    """Every audit over the whole project, old statement (``ref``) against the current one,
    both finished by the audit's filter with the service's default parameters: rows must match
    one for one, in order. Returns the row counts; raises when they differ."""
    answers, _, _ = driver.execute_query(
        statement_text("audit_inputs/failed_answers"), project=PROJECT, database_="neo4j"
    )
    needles = {r["id"]: answer_needles(r["expected_answer"] or "") for r in answers}
    checked: dict[str, Any] = {}
    for name, spec in sorted(AUDITS.items()):
        params: dict[str, Any] = {p.name: p.default for p in spec.info.parameters}
        params["project"] = PROJECT
        if spec.answer_needles:
            params["needles"] = needles if params["min_answer_coverage"] else None
        old_text = subprocess.run(
            ["git", "show", f"{ref}:cypher/audits/{name}.cypher"],
            check=True,
            capture_output=True,
            text=True,
            cwd=REPO,
        ).stdout
        started = time.perf_counter()
        old = _statement_rows(driver, old_text, params)
        old_s = time.perf_counter() - started
        started = time.perf_counter()
        new = _statement_rows(driver, statement_text(spec.statement), params)
        new_s = time.perf_counter() - started
        if spec.keep is not None:
            old = [k for r in old if (k := spec.keep(r, params)) is not None]
            new = [k for r in new if (k := spec.keep(r, params)) is not None]
        if [_comparable(r) for r in old] != [_comparable(r) for r in new]:
            first = next(
                (i for i, (a, b) in enumerate(zip(old, new, strict=False)) if a != b),
                min(len(old), len(new)),
            )
            raise RuntimeError(
                f"audit {name}: {len(old)} rows at {ref}, {len(new)} now; first difference "
                f"at row {first}"
            )
        checked[name] = {
            "rows": len(new),
            "whole_project_old_s": round(old_s, 2),
            "whole_project_new_s": round(new_s, 2),
        }
    return checked


def measure(
    client: httpx.Client, repetitions: int, ancestry: tuple[str, int]
) -> dict[str, dict[str, Any]]:
    rows: dict[str, dict[str, Any]] = {}
    names = [a["name"] for a in client.get("/audits").raise_for_status().json()]
    for name in names:
        rows[f"GET /audits/{name}"] = timed(client, "GET", f"/audits/{name}", repetitions)
    # The default first page holds more rows on the larger project (its rows grow with it); a
    # page of the same size at both sizes shows what the project's size alone costs.
    for name in names:
        rows[f"GET /audits/{name}?limit={EQUAL_PAGE}"] = timed(
            client, "GET", f"/audits/{name}", repetitions, params={"limit": str(EQUAL_PAGE)}
        )
    rows["GET /report"] = timed(client, "GET", "/report", repetitions)
    rows["GET /report.html"] = timed(client, "GET", "/report.html", repetitions)
    # The page plots one bar per period from the first attributed case to the last.
    week = {"bucket": "week"}
    rows["GET /report.html?bucket=week"] = timed(
        client, "GET", "/report.html", repetitions, params=week
    )
    case_id, nodes = ancestry
    rows[f"GET /cases/{{id}}/subgraph ({nodes} nodes)"] = timed(
        client, "GET", f"/cases/{case_id}/subgraph", repetitions
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


def table(small: dict[str, dict[str, Any]], large: dict[str, dict[str, Any]]) -> str:
    """Both sizes side by side: p95 (median) in ms, rows, and the p95 ratio large / small."""
    lines = [
        f"{'request':46} {'small p95 (med) ms':>19} {'rows':>5} "
        f"{'large p95 (med) ms':>19} {'rows':>5} {'ratio':>6}"
    ]
    for label, b in large.items():
        a = small.get(label) or small.get(_size_free(label, small)) or {}
        ratio = b["p95_ms"] / a["p95_ms"] if a.get("p95_ms") else float("nan")
        left = f"{a.get('p95_ms', 0):9.1f} ({a.get('median_ms', 0):7.1f})" if a else " " * 19
        lines.append(
            f"{label:46} {left:>19} {a.get('rows', ''):>5} "
            f"{b['p95_ms']:9.1f} ({b['median_ms']:7.1f}) {b.get('rows', ''):>5} {ratio:6.2f}"
        )
    return "\n".join(lines)


def _size_free(label: str, rows: dict[str, Any]) -> str:
    """The subgraph row's label names its node count, which differs between sizes."""
    prefix = label.split(" (")[0]
    return next((k for k in rows if k.split(" (")[0] == prefix), label)


def step(
    client: httpx.Client,
    driver: Driver,
    url: str,
    dataset: Dataset,
    repetitions: int,
    sample: int | None,
    baseline_ref: str,
) -> dict[str, Any]:
    """Ingest ``dataset``'s batches, attribute a sample, check and measure: one size."""
    operations = sum(len(b.batch["operations"]) for b in dataset.batches)
    figures: dict[str, Any] = {"load_average_at_start": os.getloadavg()}
    print(f"ingesting {operations} operations ...", flush=True)
    figures["ingest_seconds"] = round(ingest(client, dataset.batches), 1)
    print(f"  {figures['ingest_seconds']} s; attributing failed cases ...", flush=True)
    figures["attribution"] = attribute(url, dataset, sample)
    print(f"  {figures['attribution']}", flush=True)
    figures["graph"] = graph_size(client)
    print(f"  graph: {figures['graph']}", flush=True)
    figures["same_rows_as_baseline"] = same_rows_as_baseline(driver, baseline_ref)
    print(f"  same rows as {baseline_ref}: {figures['same_rows_as_baseline']}", flush=True)
    figures["ancestry_case"] = ancestry_case(driver)
    figures["requests"] = measure(client, repetitions, figures["ancestry_case"])
    figures["report_span"] = report_span(client)
    figures["load_average_at_end"] = os.getloadavg()
    return figures


def rest_of(everything: Dataset, small: Dataset) -> Dataset:
    """The batches of ``everything`` that ``small`` does not hold: what grows the project.
    Conversations are generated per (system, seed, index), so the small ones are the first."""
    small_cases = {c["id"] for b in small.batches for c in b.batch["cases"]}
    return Dataset(
        "audit-bench",
        [b for b in everything.batches if not {c["id"] for c in b.batch["cases"]} <= small_cases],
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="small conversations, 3 repetitions")
    parser.add_argument("--small", type=int, default=1, help="conversations per system first")
    parser.add_argument("--conversations", type=int, help="per system at the end (12; quick: 4)")
    parser.add_argument("--repetitions", type=int, help="timed requests each (10; --quick: 3)")
    parser.add_argument(
        "--attribute", type=int, default=40, help="cases attributed per step (a sample)"
    )
    parser.add_argument("--baseline-ref", default=BASELINE_REF, help="git ref of the old audits")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    conversations = args.conversations or (4 if args.quick else 12)
    repetitions = args.repetitions or (3 if args.quick else 10)
    distractors = QUICK_DISTRACTORS if args.quick else DISTRACTORS

    print(f"generating {conversations} conversations x {SYSTEMS} ...", flush=True)
    small = build(args.small, distractors, args.seed)
    everything = build(conversations, distractors, args.seed)
    rest = rest_of(everything, small)
    figures: dict[str, Any] = {
        "parameters": {
            "systems": list(SYSTEMS),
            "conversations_per_system": {"small": args.small, "large": conversations},
            "sessions": SESSIONS,
            "distractors": distractors,
            "repetitions": repetitions,
            "attributed_per_step": args.attribute,
            "baseline_ref": args.baseline_ref,
            "seed": args.seed,
        },
    }
    with (
        tempfile.TemporaryDirectory() as tmp,
        fresh_neo4j() as local,
        run_service(local.uri, Path(tmp)) as service,
        httpx.Client(base_url=service.url, timeout=600) as client,
        GraphDatabase.driver(local.uri, auth=("neo4j", "unused")) as driver,
    ):
        run = (client, driver, service.url)
        figures["small"] = step(*run, small, repetitions, args.attribute, args.baseline_ref)
        print(table(figures["small"]["requests"], figures["small"]["requests"]), flush=True)
        figures["large"] = step(*run, rest, repetitions, args.attribute, args.baseline_ref)
    expected = sum(len(b.batch["operations"]) for b in everything.batches)
    if figures["large"]["graph"]["nodes_by_label"]["Operation"] != expected:
        raise RuntimeError(f"expected {expected} operations: {figures['large']['graph']}")
    print(table(figures["small"]["requests"], figures["large"]["requests"]))
    print("written to", save("audits_latency", figures))
