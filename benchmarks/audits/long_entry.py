"""Audits on one memory entry with a long history (issue 21), before and after a change, on one
Neo4j. Run: ``python -m benchmarks.audits long-entry --before DIR`` where ``DIR`` is a checkout of
the code before (``git archive main | tar -x -C DIR`` will do); the code after is this checkout.

1. A fresh Neo4j; one project per size, each holding ONE memory entry written ``N`` times
   (``--versions``, default 2,500, 5,000 and 9,997): update ``k`` reads version ``k-1`` and
   writes version ``k``, which drops one word of it and adds one, so every update is a row of
   ``degraded_updates``. Ingested once, through the after service (both write the same marks).
2. Two services on that Neo4j, one per checkout. For each size, ``GET
   /audits/degraded_updates?limit=1`` ``--repetitions`` times from the after service, then from
   the before one (for the sizes in ``--before-versions``: the old statement needs minutes
   there). Between the two, the run waits until Neo4j runs no other transaction: the old
   statement goes on after its page has been answered (the driver discards the rest of the
   result, which Neo4j computes all the same), and a concurrent one would slow the next
   request. The two first pages must be the same rows, else the run fails.
3. At the largest size, ``--concurrent`` requests of that page at once (after; before too when
   the size is in ``--before-versions``).
4. At the largest size, every audit (``limit=1`` and ``limit=100``) and ``GET /report`` from
   the after service.

A request the service answers with an error is recorded with its status (the after service stops
reads past ``MEMTRACE_AUDIT_TIMEOUT_S``; the before one had no budget). Figures go to
``benchmarks/results/audits_long_entry.json`` (``--out`` to name another file).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx
from neo4j import GraphDatabase

from benchmarks.figures import save
from service.neo4j_local import LocalNeo4j
from tests.support.servers import REPO, fresh_neo4j, run_service

COMMAND = "python -m benchmarks.audits long-entry"
CODES = ("before", "after")
ENTRY = "the-entry"


def entry_batch(project: str, versions: int) -> dict[str, Any]:
    """One memory entry written ``versions`` times, one update per version after the first.
    Version ``k`` reads "... item{k-1} and item{k}"-like text and loses ``item{k-1}``."""
    operations: list[dict[str, Any]] = []
    for k in range(versions):
        content = f"the user keeps item{k} and item{k + 1} in the cupboard"
        version = {
            "id": f"v{k}",
            "kind": "memory",
            "content": content,
            "attributes": {"memory_id": ENTRY},
        }
        inputs: list[Any] = (
            [f"v{k - 1}"]
            if k
            else [{"id": "message", "kind": "message", "content": "I keep item0 and item1 there"}]
        )
        operations.append(
            {
                "id": f"op{k:05d}",
                "name": "memory.update" if k else "memory.add",
                "kind": "update",
                "session_id": "s1",
                "ts": f"2026-01-01T00:00:00.{k:06d}Z",
                "inputs": inputs,
                "outputs": [version],
            }
        )
    return {"project": project, "units": [], "operations": operations, "cases": []}


def timed_get(client: httpx.Client, path: str, params: dict[str, Any]) -> dict[str, Any]:
    started = time.perf_counter()
    response = client.get(path, params=params)
    seconds = time.perf_counter() - started
    figure: dict[str, Any] = {"s": round(seconds, 3), "status": response.status_code}
    body = response.json() if response.headers.get("content-type", "").startswith("app") else {}
    if response.status_code == 200 and isinstance(body, dict) and "rows" in body:
        figure["rows"] = body["rows"]
    elif response.status_code != 200:
        figure["error"] = body.get("message", response.text[:200])
    return figure


def summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "median_s": round(statistics.median(r["s"] for r in runs), 3),
        "runs_s": [r["s"] for r in runs],
        "statuses": sorted({r["status"] for r in runs}),
        **({"error": runs[-1]["error"]} if "error" in runs[-1] else {}),
        "first_rows": next((r["rows"] for r in runs if "rows" in r), None),
    }


def repeated(
    client: httpx.Client, path: str, params: dict[str, Any], repetitions: int
) -> dict[str, Any]:
    return summary([timed_get(client, path, params) for _ in range(repetitions)])


def wait_idle(local: LocalNeo4j) -> float:
    """Seconds until Neo4j runs no transaction but the one asking (at most 30 minutes)."""
    started = time.perf_counter()
    with GraphDatabase.driver(local.uri, auth=("neo4j", "unused")) as driver:
        while time.perf_counter() - started < 1800:
            records, _, _ = driver.execute_query("SHOW TRANSACTIONS YIELD transactionId")
            if len(records) <= 1:
                break
            time.sleep(2)
    return round(time.perf_counter() - started, 1)


def at_once(client: httpx.Client, path: str, params: dict[str, Any], n: int) -> dict[str, Any]:
    started = time.perf_counter()
    with ThreadPoolExecutor(n) as pool:
        runs = list(pool.map(lambda _: timed_get(client, path, params), range(n)))
    return {**summary(runs), "wall_s": round(time.perf_counter() - started, 3)}


def before_and_after(
    stack: ExitStack, uri: str, workdir: Path, before: Path, timeout_s: float
) -> dict[str, httpx.Client]:
    """A client of each of two services on the Neo4j at ``uri``: ``after`` runs this checkout,
    ``before`` the one at ``before``; both stop when ``stack`` closes."""
    services = {
        "after": stack.enter_context(run_service(uri, workdir, ready_s=300)),
        "before": stack.enter_context(
            run_service(
                uri,
                workdir,
                checkout=before,
                ready_s=300,
                PYTHONPATH=f"{before}{os.pathsep}{before / 'clients' / 'python'}",
            )
        ),
    }
    return {
        code: stack.enter_context(httpx.Client(base_url=service.url, timeout=timeout_s))
        for code, service in services.items()
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--before", type=Path, required=True, help="checkout before the change")
    parser.add_argument("--versions", type=int, nargs="+", default=[2_500, 5_000, 9_997])
    parser.add_argument(
        "--before-versions", type=int, nargs="*", default=None, help="sizes measured before too"
    )
    parser.add_argument("--repetitions", type=int, default=3, help="requests per service")
    parser.add_argument("--concurrent", type=int, default=3, help="requests at once, largest N")
    parser.add_argument("--out", default="audits_long_entry", help="results/<OUT>.json")
    args = parser.parse_args(argv)
    before = args.before.resolve()
    before_sizes = args.versions if args.before_versions is None else args.before_versions
    figures: dict[str, Any] = {
        "command": " ".join([COMMAND, *(argv if argv is not None else sys.argv[1:])]),
        "before": str(before),
        "after": str(REPO),
        "load_average_at_start": os.getloadavg(),
        "parameters": {
            "versions": args.versions,
            "before_versions": before_sizes,
            "repetitions": args.repetitions,
            "concurrent": args.concurrent,
        },
    }
    page = "/audits/degraded_updates"
    with (
        tempfile.TemporaryDirectory() as tmp,
        fresh_neo4j(heap="1g", pagecache="1g") as local,
        ExitStack() as stack,
    ):
        clients = before_and_after(stack, local.uri, Path(tmp), before, timeout_s=1800)
        sizes: dict[str, Any] = {}
        for n in args.versions:
            project = f"entry-{n}"
            started = time.perf_counter()
            clients["after"].post("/traces", json=entry_batch(project, n)).raise_for_status()
            size: dict[str, Any] = {"ingest_s": round(time.perf_counter() - started, 1)}
            params = {"project": project, "limit": 1}
            codes = CODES if n in before_sizes else ("after",)
            for code in reversed(codes):
                size[f"{code}_waited_for_idle_s"] = wait_idle(local)
                size[code] = repeated(clients[code], page, params, args.repetitions)
            pages = {c: size[c].pop("first_rows") for c in codes}
            if len({str(p) for p in pages.values() if p is not None}) > 1:
                raise RuntimeError(f"{n} versions: the first pages differ before and after")
            size["first_row"] = pages["after"]
            sizes[str(n)] = size
            print(f"{n} versions: {size}", flush=True)
            figures["degraded_updates_limit_1"] = sizes
            save(args.out, figures)  # so far, in case a later step fails
        n = max(args.versions)
        params = {"project": f"entry-{n}", "limit": 1}
        at_once_figures: dict[str, Any] = {}
        for code in reversed(CODES if n in before_sizes else ("after",)):
            wait_idle(local)
            at_once_figures[code] = at_once(clients[code], page, params, args.concurrent)
            at_once_figures[code].pop("first_rows")
        figures["degraded_updates_at_once"] = at_once_figures
        print(f"{args.concurrent} at once: {at_once_figures}", flush=True)
        save(args.out, figures)
        wait_idle(local)
        names = [a["name"] for a in clients["after"].get("/audits").raise_for_status().json()]
        others: dict[str, Any] = {}
        for name in names:
            for limit in (1, 100):
                runs = repeated(
                    clients["after"],
                    f"/audits/{name}",
                    {"project": f"entry-{n}", "limit": limit},
                    args.repetitions,
                )
                runs.pop("first_rows")
                others[f"{name}?limit={limit}"] = runs
        others["report"] = repeated(
            clients["after"], "/report", {"project": f"entry-{n}"}, args.repetitions
        )
        others["report"].pop("first_rows")
        figures["after_every_request_at_largest"] = others
        print(f"at entry-{n}: {others}", flush=True)
    figures["load_average_at_end"] = os.getloadavg()
    print("written to", save(args.out, figures))
