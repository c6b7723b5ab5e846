"""Attribution in a big project: the LoCoMo failed cases alone, then next to >= 100k operations
of other conversations; cases/s of both, their ratio, and whether the results are the same.

Run: ``python -m benchmarks.attribution big-project`` (``--quick``: 2 LoCoMo conversations and
a tenth of the filler, to try the script).

1. A fresh Neo4j and the service on it. The ten LoCoMo-derived traces (observations pipeline:
   each conversation's operations name it by a ``conversation_id`` attribute) go into project
   ``alone``, and the same traces into project ``big``.
2. ``big`` also gets ``--filler`` other conversations of ``--ops-per-filler`` operations each,
   shaped like the LoCoMo traces where scope reads look: the same system, a ``conversation_id``
   of their own, ``filler-<n>-session_<k>`` session ids, one real LoCoMo turn (taken in turn
   from the ten conversations) read by each extraction, at times spread over the LoCoMo
   conversations' own time span. They carry no cases, so a job over ``big`` attributes exactly
   the cases a job over ``alone`` does. Sent through ``POST /traces`` in big batches.
3. Jobs with ``refresh``, in turn ``alone``, ``big``, ``alone``, ``big`` (so a change in machine
   load hits both about alike); cases/s of each, the ratio big/alone of the summed times.
4. Invariance: the ``big`` results against the ``alone`` results, field by field
   (``benchmarks.attribution.invariance``: only timing fields may differ).
5. The plans of the attribution reads in ``big`` (``PROFILE``, database hits and rows per
   operator), for the README's account of what each read costs.

Figures go to ``benchmarks/results/attribution_big_project.json``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
from neo4j import GraphDatabase

from benchmarks.attribution.invariance import differences
from benchmarks.attribution.job import job_results, run_job, wait_all
from benchmarks.attribution.run import in_project, ingest, split_batch
from benchmarks.datasets import load_locomo
from benchmarks.datasets.labels import LabelledBatch
from benchmarks.figures import save
from cypher import query
from tests.support.servers import REPO, fresh_neo4j, run_service

COMMAND = "python -m benchmarks.attribution big-project"

FILLER_BATCH_OPS = 5000


def _when(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def filler(conversations: list[LabelledBatch], count: int, ops_each: int) -> list[dict[str, Any]]:
    """``count`` conversations of ``ops_each`` extractions, as ``POST /traces`` bodies."""
    turns = [
        u["content"]
        for item in conversations
        for u in item.batch["units"]
        if u["kind"] == "message"
    ]
    times = sorted(_when(o["ts"]) for item in conversations for o in item.batch["operations"])
    start, span = times[0], times[-1] - times[0]
    system = conversations[0].batch["operations"][0]["system"]
    bodies: list[dict[str, Any]] = []
    body: dict[str, Any] = {"project": "big", "units": [], "operations": [], "cases": []}
    n = 0
    for c in range(count):
        name = f"filler-{c:03d}"
        for k in range(ops_each):
            when = (start + span * (k / ops_each)).isoformat()
            body["operations"].append(
                {
                    "id": f"{name}-op-{k:06d}",
                    "name": "extract_observations",
                    "kind": "extraction",
                    "system": system,
                    "session_id": f"{name}-session_{k * 30 // ops_each + 1}",
                    "ts": when,
                    "inputs": [
                        {
                            "id": f"{name}-m-{k:06d}",
                            "kind": "message",
                            "content": turns[n % len(turns)],
                            "ts": when,
                        }
                    ],
                    "outputs": [
                        {
                            "id": f"{name}-f-{k:06d}",
                            "kind": "memory",
                            "content": turns[(n + 7) % len(turns)],
                            "attributes": {"memory_id": f"{name}-e-{k:06d}"},
                        }
                    ],
                    "attributes": {"conversation_id": name},
                }
            )
            n += 1
            if len(body["operations"]) >= FILLER_BATCH_OPS:
                bodies.append(body)
                body = {"project": "big", "units": [], "operations": [], "cases": []}
    if body["operations"]:
        bodies.append(body)
    return bodies


def send_all(url: str, bodies: list[dict[str, Any]], senders: int = 2) -> float:
    """POST every body, ``senders`` at a time; seconds taken."""

    def send(body: dict[str, Any]) -> None:
        with httpx.Client(base_url=url, timeout=600) as client:
            for part in split_batch(body):
                response = client.post("/traces", json=part)
                if response.status_code != 200:
                    raise RuntimeError(f"filler: {response.status_code} {response.text[:300]}")

    started = time.perf_counter()
    with ThreadPoolExecutor(senders) as pool:
        list(pool.map(send, bodies))
    return time.perf_counter() - started


def timed_job(client: httpx.Client, project: str) -> tuple[float, dict[str, Any]]:
    started = time.perf_counter()
    job = wait_all(client, {project: run_job(client, project)["id"]})[project]
    return time.perf_counter() - started, job


def counts(uri: str, project: str) -> dict[str, int]:
    out: dict[str, int] = {}
    with GraphDatabase.driver(uri, auth=None) as driver:
        for name, statement in (
            ("operations", "MATCH (o:Operation {project: $project}) RETURN count(o) AS n"),
            ("units", "MATCH (u:Unit {project: $project}) RETURN count(u) AS n"),
            (
                "sessions",
                "MATCH (o:Operation {project: $project}) RETURN count(DISTINCT o.session_id) AS n",
            ),
        ):
            out[name] = driver.execute_query(statement, project=project).records[0]["n"]
    return out


def _profile_rows(plan: Any) -> list[dict[str, Any]]:
    rows = []
    stack = [(plan, 0)]
    while stack:
        node, depth = stack.pop()
        rows.append(
            {
                "operator": "  " * depth + node["operatorType"],
                "details": str(node.get("args", {}).get("Details", ""))[:160],
                "rows": node.get("rows"),
                "db_hits": node.get("dbHits"),
            }
        )
        stack.extend((child, depth + 1) for child in reversed(node.get("children", [])))
    return rows


def profile_reads(uri: str, reads: dict[str, tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """``PROFILE`` of each read (label -> statement, parameters), after a warm-up run."""
    out: dict[str, Any] = {}
    with GraphDatabase.driver(uri, auth=None) as driver:
        for name, (statement, values) in reads.items():
            text = query(statement)
            with driver.session() as session:
                session.run(text, values).consume()
                summary = session.run("PROFILE " + text, values).consume()
            plan = summary.profile or {}
            rows = _profile_rows(plan)
            out[name] = {
                "db_hits": sum(r["db_hits"] or 0 for r in rows),
                "ms": (summary.result_available_after or 0) + (summary.result_consumed_after or 0),
                "operators": rows,
            }
            print(f"  PROFILE {name}: {out[name]['db_hits']} db hits", flush=True)
    return out


def read_parameters(item: LabelledBatch) -> dict[str, tuple[str, dict[str, Any]]]:
    """Each attribution read with parameters of one failed case of ``item`` in ``big``."""
    case = next(c for c in item.batch["cases"] if c.get("verdict") == "failed")
    conversation = item.hidden["conversation"]
    ops = item.batch["operations"]
    sessions = sorted({o["session_id"] for o in ops if o.get("session_id")})[:3]
    message = next(u["id"] for u in item.batch["units"] if u["kind"] == "message")
    scope = {
        "project": "big",
        "systems": [ops[0]["system"]],
        "sessions": [],
        "conversations": [],
        "users": [],
        "messages": [],
        "until": None,
        "limit": 20_001,
    }
    return {
        "ancestors": (
            "attribution/ancestors",
            {"project": "big", "unit_id": case["answer_unit"], "limit": 20_000},
        ),
        "descendants": (
            "attribution/descendants",
            {"project": "big", "unit_ids": [message], "limit": 20_000},
        ),
        "scope_messages, named by attributes": (
            "attribution/scope_messages",
            {**scope, "conversations": [conversation]},
        ),
        "scope_messages, named by sessions": (
            "attribution/scope_messages",
            {**scope, "sessions": sessions},
        ),
    }


def measure(
    client: httpx.Client,
    uri: str,
    sample: LabelledBatch,
    failed: int,
    rounds: int,
    figures: dict[str, Any],
) -> None:
    """Steps 3-5 of the module docstring, on a Neo4j and service holding both projects."""
    figures["projects"] = {p: counts(uri, p) for p in ("alone", "big")}
    print(f"projects: {figures['projects']}", flush=True)
    rows, seconds = [], {"alone": 0.0, "big": 0.0}
    results: dict[str, dict[str, dict[str, Any]]] = {}
    for round_ in range(rounds):
        for project in ("alone", "big"):
            wall, job = timed_job(client, project)
            seconds[project] += wall
            rows.append(
                {
                    "round": round_,
                    "project": project,
                    "seconds": round(wall, 2),
                    "cases_per_s": round(failed / wall, 2),
                    "status": job["status"],
                    "load_average": list(os.getloadavg()),
                }
            )
            print(
                f"  {project:5} round {round_}: {failed} cases {wall:6.1f} s "
                f"{failed / wall:6.1f} cases/s ({job['status']})",
                flush=True,
            )
            results[project] = job_results(client, project, job["id"])
            figures["rows"] = rows
            save("attribution_big_project", figures)  # so far, should the run be cut short
    figures["cases_per_s"] = {p: round(failed * rounds / s, 2) for p, s in seconds.items()}
    figures["ratio_big_to_alone"] = round(seconds["alone"] / seconds["big"], 3)
    figures["invariance"] = differences(results["alone"], results["big"])
    print(f"cases/s {figures['cases_per_s']} ratio {figures['ratio_big_to_alone']}")
    print(f"big vs alone, field by field: {figures['invariance']}", flush=True)
    save("attribution_big_project", figures)
    figures["profiles"] = profile_reads(uri, read_parameters(sample))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--locomo", default="../shared/data/locomo10")
    parser.add_argument("--filler", type=int, default=60, help="other conversations")
    parser.add_argument("--ops-per-filler", type=int, default=1700)
    parser.add_argument("--rounds", type=int, default=2, help="alone/big job pairs")
    parser.add_argument(
        "--attach",
        nargs=2,
        metavar=("NEO4J_URI", "SERVICE_URL"),
        help="measure on a Neo4j and service that already hold both projects (a run cut short)",
    )
    args = parser.parse_args(argv)
    if args.quick:
        args.filler, args.ops_per_filler = 6, 1700
    conversations = load_locomo(str(REPO / args.locomo), limit=2 if args.quick else None)
    alone = [in_project(b, "alone") for b in conversations]
    big = [in_project(b, "big") for b in conversations]
    failed = sum(1 for b in alone for c in b.batch["cases"] if c.get("verdict") == "failed")
    figures: dict[str, Any] = {
        "command": " ".join([COMMAND, *(sys.argv[1:] if argv is None else argv)]),
        "failed_cases": failed,
        "conversations": {"locomo": len(conversations), "filler": args.filler},
        "ops_per_filler": args.ops_per_filler,
        "load_average_at_start": list(os.getloadavg()),
    }
    if args.attach:  # a Neo4j and service that already hold both projects
        uri, url = args.attach
        with httpx.Client(base_url=url, timeout=600) as client:
            measure(client, uri, big[0], failed, args.rounds, figures)
    else:
        with (
            tempfile.TemporaryDirectory() as tmp,
            fresh_neo4j() as local,
            run_service(local.uri, Path(tmp)) as service,
            httpx.Client(base_url=service.url, timeout=600) as client,
        ):
            figures["ingest_locomo_s"] = round(ingest(client, alone) + ingest(client, big), 1)
            bodies = filler(conversations, args.filler, args.ops_per_filler)
            figures["ingest_filler_s"] = round(send_all(service.url, bodies), 1)
            measure(client, local.uri, big[0], failed, args.rounds, figures)
    figures["load_average_at_end"] = list(os.getloadavg())
    path = save("attribution_big_project", figures)
    print(f"written to {path}")
