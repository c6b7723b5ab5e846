"""Attribution, the report, the audits and the case list in one project grown to a million
operations by traces that name no conversation, user or session.

Run: ``python -m benchmarks.attribution million`` (``--sizes 1000,10000`` to try it;
``--conversation-ids`` for the named variant).

1. A fresh Neo4j (``--neo4j-memory`` heap and page cache) and the service on it.
2. The fixed traces go in first: LoCoMo conversation ``--fixed`` traced by the Mem0-like
   (observations: facts extracted per speaker) and the RAG-like (chunks) pipelines, every
   retrieval consuming every memory live at question time (a vector search reads the whole
   store). ``--cases`` of their labelled failed cases, evenly spaced, are the fixed cases: the
   same cases are attributed at every size, and their labels say what the truth is.
3. Filler: the LoCoMo conversations (both pipelines; retrievals per ``--filler-search``) copied
   under fresh ids (``benchmarks.datasets.copies``), sent in ``--batch-ops`` bodies by 2 senders
   until the project holds the next size. Without ``--conversation-ids`` no operation or unit of
   any trace names a conversation, user or session (``copies.unnamed``), as most SDK and
   OpenTelemetry traces do not; with it every operation has a ``conversation_id`` of its copy.
4. At each size: ``POST /attribute`` (heuristic, refresh) for every fixed case, one at a time,
   an untimed pass, then ``--repeats`` passes: p50/p95 and the CPU the service and Neo4j spent
   per case (``/proc``); ``GET /report``, the first page of every audit (``GET /audits`` lists
   them) and of the case list (50 rows, as the console asks), ``--reads`` times each: p50; how
   many fixed cases' results differ field by field from the first size's
   (``benchmarks.attribution.invariance``) and how many blame the labelled operation.
5. ``--job-processes 1,2,4``: at the last size, a job over the project's failed cases on N
   service processes sharing one Neo4j, cases/s; only if the service shares a job between
   processes (a ``job_lease_s`` setting) and the filler carries no failed case
   (``--filler-cases passed``), so that the job covers the fixed cases only; else skipped, saying
   why.

The table (rows = measures, columns = sizes) is printed in Markdown after every size, for
``docs/scale.md``; figures go to ``benchmarks/results/attribution_million[_named].json``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from benchmarks.attribution.invariance import differences
from benchmarks.attribution.run import split_batch
from benchmarks.datasets import LabelledBatch, load_locomo
from benchmarks.datasets.copies import copy_tag, grow, named, unnamed
from benchmarks.figures import cpu_seconds, percentile, save
from tests.support.servers import REPO, ServiceHandle, fresh_neo4j, run_service

COMMAND = "python -m benchmarks.attribution million"
PROJECT = "million"
PIPELINES = ("observations", "rag")
PAGE = 50  # the console's page of cases and of audit rows
SENDERS = 2
IN_FLIGHT = 4  # bodies built ahead of the senders: the filler is never all in memory


def locomo_dir(path: str) -> Path:
    """The LoCoMo directory: ``path`` as given, or relative to this checkout, or to the main
    checkout when this is a git worktree (``../shared`` sits beside the main checkout)."""
    given = Path(path)
    if given.is_absolute():
        return given
    common = subprocess.run(
        ["git", "rev-parse", "--path-format=absolute", "--git-common-dir"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()
    roots = [REPO, *([Path(common).parent] if common else [])]
    return next((r / given for r in roots if (r / given).is_dir()), REPO / given)


@dataclass
class Traces:
    """The fixed traces, their chosen failed cases (id -> label) and the filler's bases."""

    fixed: list[dict[str, Any]]
    cases: dict[str, dict[str, Any]]
    bases: list[tuple[str, dict[str, Any]]]  # (conversation, unnamed batch) in copy order


def _shape(item: LabelledBatch, conversation_ids: bool, name: str) -> dict[str, Any]:
    batch = unnamed({**item.batch, "project": PROJECT})
    return named(batch, name) if conversation_ids else batch


def traces(args: argparse.Namespace) -> Traces:
    """Steps 2 and 3's traces (see the module docstring)."""
    path = locomo_dir(args.locomo)
    fixed_items = [
        item
        for pipeline in PIPELINES
        for item in load_locomo(
            path, conversations=[args.fixed], pipeline=pipeline, search="whole_store"
        )
    ]
    fixed = [
        _shape(item, args.conversation_ids, f"fixed-{args.fixed}-{item.hidden['pipeline']}")
        for item in fixed_items
    ]
    labelled = [(c, item.labels[c]) for item in fixed_items for c in sorted(item.labels)]
    step = max(len(labelled) / args.cases, 1.0)
    chosen = [labelled[int(i * step)] for i in range(min(args.cases, len(labelled)))]
    bases = [
        (
            f"{item.hidden['conversation']}-{pipeline}",
            _shape(_filler_cases(item, args.filler_cases), False, ""),
        )
        for pipeline in PIPELINES
        for item in load_locomo(path, pipeline=pipeline, search=args.filler_search)
    ]
    bases.sort(key=lambda b: b[0])
    return Traces(fixed, {c: dict(label) for c, label in chosen}, bases)


def _filler_cases(item: LabelledBatch, which: str) -> LabelledBatch:
    batch = dict(item.batch)
    if which == "none":
        batch["cases"] = []
    elif which == "passed":
        batch["cases"] = [{**c, "verdict": "passed"} for c in batch["cases"]]
    return LabelledBatch(batch, item.labels, item.hidden)


@dataclass
class Filler:
    """The copies sent so far; each call of :meth:`bodies` goes on from the next one."""

    found: Traces
    batch_ops: int
    conversation_ids: bool
    next_copy: int = 0

    def bodies(self, operations: int) -> Iterator[dict[str, Any]]:
        """``POST /traces`` bodies of about ``batch_ops`` operations, of the next copies until
        they hold ``operations`` operations."""
        bases = [b for _, b in self.found.bases]
        body: dict[str, Any] = {"project": PROJECT, "units": [], "operations": [], "cases": []}
        for number, batch in grow(bases, self.next_copy, operations):
            self.next_copy = number + 1
            if self.conversation_ids:
                conversation = self.found.bases[number % len(bases)][0]
                batch = named(batch, f"{copy_tag(number)}-{conversation}")
            for key in ("units", "operations", "cases"):
                body[key].extend(batch[key])
            if len(body["operations"]) >= self.batch_ops:
                yield body
                body = {"project": PROJECT, "units": [], "operations": [], "cases": []}
        if body["operations"]:
            yield body


def send(url: str, bodies: Iterator[dict[str, Any]]) -> float:
    """POST every body (split within the service's limits), :data:`SENDERS` at a time and at
    most :data:`IN_FLIGHT` built ahead; seconds taken."""

    def post(client: httpx.Client, body: dict[str, Any]) -> None:
        for part in split_batch(body):
            response = client.post("/traces", json=part)
            if response.status_code != 200:
                raise RuntimeError(f"ingest: {response.status_code} {response.text[:300]}")

    started = time.perf_counter()
    with httpx.Client(base_url=url, timeout=900) as client, ThreadPoolExecutor(SENDERS) as pool:
        pending: list[Future[None]] = []
        for body in bodies:
            pending.append(pool.submit(post, client, body))
            while len(pending) >= IN_FLIGHT:
                pending.pop(0).result()
        for future in pending:
            future.result()
    return time.perf_counter() - started


@dataclass
class Processes:
    """The pids whose CPU a pass is charged with."""

    service: list[int]
    neo4j: int | None
    marks: dict[str, float] = field(default_factory=dict)

    def _now(self) -> dict[str, float]:
        return {
            "service": sum(cpu_seconds(p) for p in self.service),
            "neo4j": cpu_seconds(self.neo4j) if self.neo4j else 0.0,
        }

    def start(self) -> None:
        self.marks = self._now()

    def ms_per(self, n: int) -> dict[str, float]:
        now = self._now()
        return {k: round(1000 * (now[k] - self.marks[k]) / max(n, 1), 1) for k in now}


def attribute_fixed(
    client: httpx.Client, cases: dict[str, dict[str, Any]], repeats: int, cpu: Processes
) -> dict[str, Any]:
    """Step 4's ``POST /attribute`` passes: latencies, CPU per case, the last pass's results.

    An untimed pass goes first: at the first size Neo4j plans and compiles the attribution
    reads then, a cost no later size pays, which would flatter every later size's ratio to the
    first; at a later size it brings the grown store into the page cache, as a service that has
    been up would have it."""
    body = {"judge": "heuristic", "refresh": True}
    for case_id in cases:
        client.post(f"/attribute/{case_id}", params={"project": PROJECT}, json=body)
    latencies: list[float] = []
    results: dict[str, dict[str, Any]] = {}
    cpu.start()
    for _ in range(repeats):
        for case_id in cases:
            started = time.perf_counter()
            response = client.post(f"/attribute/{case_id}", params={"project": PROJECT}, json=body)
            latencies.append(1000 * (time.perf_counter() - started))
            if response.status_code != 200:
                raise RuntimeError(f"attribute {case_id}: {response.text[:300]}")
            results[case_id] = response.json()
    blamed = sum(
        1
        for case_id, label in cases.items()
        if ((results[case_id].get("operation") or {}).get("id")) == label["operation_id"]
    )
    return {
        "p50_ms": round(statistics.median(latencies)),
        "p95_ms": round(percentile(latencies, 95)),
        "cpu_ms_per_case": cpu.ms_per(len(latencies)),
        "blamed_labelled_operation": blamed,
        "results": results,
    }


def read_p50(client: httpx.Client, path: str, params: dict[str, Any], reads: int) -> dict[str, Any]:
    """``GET path`` ``reads`` times: p50 ms and the statuses seen (a 422 is a read over budget)."""
    latencies, statuses = [], set()
    for _ in range(reads):
        started = time.perf_counter()
        statuses.add(client.get(path, params={"project": PROJECT, **params}).status_code)
        latencies.append(1000 * (time.perf_counter() - started))
    return {"p50_ms": round(statistics.median(latencies)), "statuses": sorted(statuses)}


def reads(client: httpx.Client, count: int) -> dict[str, dict[str, Any]]:
    """Step 4's reads: the report, every audit's first page, the case list's first page."""
    out = {"GET /report": read_p50(client, "/report", {}, count)}
    for audit in client.get("/audits").json():
        path = f"/audits/{audit['name']}"
        out[f"GET {path}"] = read_p50(client, path, {"limit": PAGE}, count)
    out["GET /cases"] = read_p50(client, "/cases", {"limit": PAGE + 1}, count)
    return out


def _ms(read: dict[str, Any]) -> str:
    bad = [s for s in read["statuses"] if s != 200]
    return f"{read['p50_ms']:,}" + (f" ({', '.join(map(str, bad))})" if bad else "")


def _differing(row: dict[str, Any]) -> str:
    found = row["invariance"]
    fields = ", ".join(f"{f} {n}" for f, n in sorted(row["fields_differing"].items()))
    return f"{found['differ'] + found['only_before']}" + (f" ({fields})" if fields else "")


def table(rows: list[dict[str, Any]]) -> str:
    """The Markdown table of every size measured so far: rows = measures, columns = sizes."""
    head = "| | " + " | ".join(f"{r['operations']:,} ops" for r in rows) + " |"
    lines = [head, "|---" * (len(rows) + 1) + "|"]

    def line(name: str, cell: Any) -> None:
        lines.append(f"| {name} | " + " | ".join(cell(r) for r in rows) + " |")

    line("ingest s per 1,000 ops (this step)", lambda r: f"{r['ingest_s_per_1000']:.1f}")
    line("`POST /attribute` p50 / p95 ms", lambda r: f"{r['p50_ms']:,} / {r['p95_ms']:,}")
    line(
        "CPU ms per case, service / Neo4j",
        lambda r: f"{r['cpu_ms_per_case']['service']:,.0f} / {r['cpu_ms_per_case']['neo4j']:,.0f}",
    )
    for name in rows[0]["reads"]:
        line(f"`{name}` p50 ms", lambda r, n=name: _ms(r["reads"][n]))
    line("fixed cases differing from the first size (in)", _differing)
    line(
        "fixed cases blaming the labelled operation", lambda r: str(r["blamed_labelled_operation"])
    )
    line("load average (1 min)", lambda r: f"{r['load_average'][0]:.1f}")
    return "\n".join(lines)


def jobs(
    args: argparse.Namespace, uri: str, first: ServiceHandle, tmp: Path, neo4j: int | None
) -> list[dict[str, Any]]:
    """Step 5: one job over the project's failed cases on each of ``--job-processes``."""
    from benchmarks.attribution.job import run_job, wait_all
    from service.settings import Settings

    if "job_lease_s" not in Settings.model_fields:
        print("jobs: skipped: this service runs a job on the process that received it", flush=True)
        return []
    if args.filler_cases != "passed":
        print("jobs: skipped: the filler has failed cases (--filler-cases passed)", flush=True)
        return []
    out = []
    for n in args.job_processes:
        with ExitStack() as stack:
            extra = [stack.enter_context(run_service(uri, tmp)) for _ in range(n - 1)]
            cpu = Processes([first.process.pid, *(s.process.pid for s in extra)], neo4j)
            with httpx.Client(base_url=first.url, timeout=600) as client:
                cpu.start()
                started = time.perf_counter()
                job = wait_all(client, {PROJECT: run_job(client, PROJECT)["id"]})[PROJECT]
                wall = time.perf_counter() - started
            row = {
                "processes": n,
                "cases": job["total"],
                "cases_per_s": round(job["total"] / wall, 2),
                "status": job["status"],
                "cpu_ms_per_case": cpu.ms_per(job["total"]),
            }
            print(f"  job on {n} processes: {row}", flush=True)
            out.append(row)
    return out


def _sizes(text: str) -> list[int]:
    return sorted(int(s) for s in text.split(","))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--sizes", type=_sizes, default=_sizes("1000,10000,100000,1000000"))
    parser.add_argument("--conversation-ids", action="store_true", help="the named variant")
    parser.add_argument("--locomo", default="../shared/data/locomo10")
    parser.add_argument("--fixed", default="26", help="the fixed cases' LoCoMo conversation")
    parser.add_argument("--cases", type=int, default=30, help="fixed failed cases")
    parser.add_argument("--repeats", type=int, default=2, help="passes over the fixed cases")
    parser.add_argument("--reads", type=int, default=5, help="requests per GET measured")
    parser.add_argument("--batch-ops", type=int, default=2000, help="operations per POST body")
    parser.add_argument("--neo4j-memory", default="1g", help="Neo4j heap and page cache each")
    parser.add_argument(
        "--filler-search",
        choices=("whole_store", "top_k"),
        default="whole_store",
        help="what the filler's retrievals consume (top_k: 60x fewer edges, for 1M)",
    )
    parser.add_argument(
        "--filler-cases",
        choices=("as-traced", "passed", "none"),
        default="as-traced",
        help="the filler's cases: as the copied traces have them, all passed, or none",
    )
    parser.add_argument(
        "--job-processes", type=lambda s: [int(x) for x in s.split(",")], default=[]
    )
    args = parser.parse_args(argv)
    found = traces(args)
    fixed_ops = sum(len(b["operations"]) for b in found.fixed)
    if fixed_ops > args.sizes[0]:
        parser.error(f"the fixed traces hold {fixed_ops} operations, over the first size")
    name = "attribution_million" + ("_named" if args.conversation_ids else "")
    figures: dict[str, Any] = {
        "command": " ".join([COMMAND, *(sys.argv[1:] if argv is None else argv)]),
        "fixed_operations": fixed_ops,
        "fixed_cases": len(found.cases),
        "load_average_at_start": list(os.getloadavg()),
    }
    print(f"fixed traces: {fixed_ops} operations, {len(found.cases)} fixed cases", flush=True)
    rows: list[dict[str, Any]] = []
    started_run = time.perf_counter()
    with (
        tempfile.TemporaryDirectory() as tmp,
        fresh_neo4j(heap=args.neo4j_memory, pagecache=args.neo4j_memory) as local,
        run_service(local.uri, Path(tmp), ready_s=300) as service,
        httpx.Client(base_url=service.url, timeout=900) as client,
    ):
        cpu = Processes([service.process.pid], local.pid())
        filler = Filler(found, args.batch_ops, args.conversation_ids)
        held, first_results = 0, None
        for size in args.sizes:
            seconds = send(service.url, iter(found.fixed)) if held == 0 else 0.0
            held = held or fixed_ops
            seconds += send(service.url, filler.bodies(size - held))
            step_ops, held = size - (0 if not rows else rows[-1]["operations"]), size
            print(f"{size:,} operations: ingest {seconds:.1f} s", flush=True)
            row: dict[str, Any] = {
                "operations": size,
                "ingest_s": round(seconds, 1),
                "ingest_s_per_1000": round(1000 * seconds / max(step_ops, 1), 2),
            }
            row.update(attribute_fixed(client, found.cases, args.repeats, cpu))
            results = row.pop("results")
            first_results = first_results or results
            row["invariance"] = differences(first_results, results, limit=len(results))
            row["fields_differing"] = Counter(
                f for example in row["invariance"]["examples"] for f in example["fields"]
            )
            row["reads"] = reads(client, args.reads)
            row["load_average"] = list(os.getloadavg())
            rows.append(row)
            figures["rows"] = rows
            save(name, figures)
            print(table(rows), flush=True)
        if args.job_processes:
            figures["jobs"] = jobs(args, local.uri, service, Path(tmp), local.pid())
    figures["seconds"] = round(time.perf_counter() - started_run)
    figures["load_average_at_end"] = list(os.getloadavg())
    path = save(name, figures)
    print(f"run took {figures['seconds']} s; written to {path}", flush=True)
