"""Attribution accuracy and cost on labelled datasets.

Run: ``python -m benchmarks.attribution accuracy`` (``--quick``: a 2-minute run).

1. A fresh Neo4j, and services on it: one plain (heuristic judge), one whose llm judge asks an
   in-process ORACLE (:mod:`.oracle`, answering from ground truth), and one asking the oracle
   about every unit (``MEMTRACE_LLM_HEURISTIC_CONFIDENCE=1.01``, row ``llm-all``).
   ``--llm-base-url URL --llm-model NAME [--llm-api-key KEY]`` puts a real endpoint in the
   oracle's place for these rows and the in-process llm row (:mod:`.endpoint`).
2. Datasets: synthetic traces at three sizes (small, default, large) and the LoCoMo-derived
   traces, every batch in a project of its own.
3. ``POST /attribute`` (refresh) for every labelled failed case and judge row, ``--concurrency``
   at a time.
4. The flat-log baseline (:mod:`.flatlog`): one call per case over the whole log,
   answered by the oracle with the true label (its accuracy is an upper bound; its cost is real),
   whichever endpoint the llm rows ask.
5. The engine alone in-process (:mod:`.inprocess`).

Figures go to ``benchmarks/results/attribution_accuracy.json`` and ``attribution_accuracy.md``;
every case's record to ``attribution_accuracy_cases.jsonl``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from benchmarks.attribution import flatlog
from benchmarks.attribution.endpoint import (
    ORACLE_MODEL,
    Endpoint,
    add_endpoint_options,
    endpoint_of,
    llm_judge,
    redacted,
)
from benchmarks.attribution.inprocess import attribute_in_process
from benchmarks.attribution.metrics import Record, op_correct, type_correct
from benchmarks.attribution.oracle import Oracle
from benchmarks.attribution.report import figures as make_figures
from benchmarks.attribution.report import markdown
from benchmarks.attribution.run import (
    CaseRef,
    Dataset,
    attribute_all,
    case_fields,
    in_project,
    ingest,
)
from benchmarks.datasets import LabelledBatch, generate_synthetic, load_locomo
from benchmarks.datasets.locomo import PIPELINES
from benchmarks.datasets.rewrite import SHAPES as REWRITE_SHAPES
from benchmarks.datasets.rewrite import load_rewrite
from benchmarks.datasets.rewrite_otel import DECIDING, as_otel
from benchmarks.datasets.rewrite_otel import SHAPES as OTEL_SHAPES
from benchmarks.figures import RESULTS, save
from service.attribution.judges.base import Judge
from service.attribution.judges.heuristic import HeuristicJudge
from service.settings import Settings
from tests.support.llm_server import ScriptedLLM, scripted_llm
from tests.support.servers import REPO, fresh_neo4j, run_service

COMMAND = "python -m benchmarks.attribution accuracy"

SIZES = {"small": (3, 10), "default": (6, 60), "large": (12, 1200)}
QUICK_SIZES = {"small": (3, 10), "default": (6, 60)}
ROWS = {"heuristic": "heuristic", "llm": "llm", "llm-all": "llm"}  # row -> the judge it asks


@dataclass(frozen=True)
class Row:
    name: str
    judge: str
    url: str


def synthetic(sizes: dict[str, tuple[int, int]], conversations: int, seed: int) -> list[Dataset]:
    out = []
    for name, (sessions, distractors) in sizes.items():
        batches = generate_synthetic(
            seed,
            n_conversations=conversations,
            n_sessions=sessions,
            n_distractors=distractors,
            project=f"syn-{name}",
        )
        moved = [in_project(b, f"syn-{name}-{i}") for i, b in enumerate(batches)]
        out.append(Dataset(f"synthetic-{name}", moved))
    return out


TUNE = ("26", "30", "41", "42", "43")  # LoCoMo conversations 0-4: the only ones tuned on
HELDOUT = ("44", "47", "48", "49", "50")  # conversations 5-9: reported, never tuned on
QUICK_CONVERSATIONS = ("26", "44")  # one of each half
SHARED_PIPELINES = ("observations", "rag")


def _halved(item: LabelledBatch) -> LabelledBatch:
    half = "tune" if item.hidden["conversation"] in TUNE else "heldout"
    return LabelledBatch(item.batch, item.labels, {**item.hidden, "half": half})


def locomo(path: str, conversations: tuple[str, ...]) -> list[Dataset]:
    """Per-trace LoCoMo datasets (one project per conversation and pipeline) and the shared
    project (every conversation, the observations and RAG pipelines, one project)."""
    out = []
    for pipeline in PIPELINES:
        batches = [
            _halved(b)
            for b in load_locomo(path, conversations=list(conversations), pipeline=pipeline)
        ]
        name = "locomo" if pipeline == "observations" else f"locomo-{pipeline.replace('_', '-')}"
        out.append(
            Dataset(name, [in_project(b, f"{name}-{b.hidden['conversation']}") for b in batches])
        )
    # Built again in the shared project: ids are tagged by project, so the oracle (and a reader
    # of the results) can tell a shared-project case from its per-trace twin.
    shared = [
        _halved(b)
        for p in SHARED_PIPELINES
        for b in load_locomo(
            path, conversations=list(conversations), pipeline=p, project="locomo-shared"
        )
    ]
    out.append(Dataset("locomo-shared", shared))
    return out


def rewrite(path: str, conversations: tuple[str, ...], shapes: tuple[str, ...]) -> list[Dataset]:
    """The store-rewriting set (:mod:`benchmarks.datasets.rewrite`), one dataset per shape; its
    batches come in their own projects and carry their half. The ``rewrite-otel`` shapes: the
    same conversations as OpenTelemetry spans (:mod:`benchmarks.datasets.rewrite_otel`), in a
    project each or all in one."""
    out = [
        Dataset(shape, load_rewrite(path, shape=shape, conversations=conversations))
        for shape in shapes
        if shape not in OTEL_SHAPES
    ]
    native = (
        []
        if not set(shapes) & set(OTEL_SHAPES)
        else load_rewrite(path, shape="rewrite", conversations=conversations)
    )
    for shape in OTEL_SHAPES:
        if shape in shapes:
            out.append(Dataset(shape, [otel_batch(item, shape) for item in native]))
    return out


def otel_batch(item: LabelledBatch, shape: str = OTEL_SHAPES[0]) -> LabelledBatch:
    """``item`` as an OpenTelemetry agent sends it, in its shape's project (``rewrite-otel-<conv>``,
    or ``rewrite-otel-shared`` for every conversation), with the oracle's truth of ``item``."""
    truths = {
        case: (truth.carriers, truth.needles)
        for (_, case), truth in Oracle.of([item]).by_case.items()
    }
    converted = as_otel(item, truths, deciding=shape == DECIDING)
    project = shape if "shared" in shape else f"{shape}-{item.hidden['conversation']}"
    return LabelledBatch(
        {**converted.batch, "project": project}, converted.labels, converted.hidden
    )


DATASETS = (
    *(f"synthetic-{size}" for size in SIZES),
    *("locomo" if p == "observations" else f"locomo-{p.replace('_', '-')}" for p in PIPELINES),
    "locomo-shared",
    *REWRITE_SHAPES,
    *OTEL_SHAPES,
)
"""Every dataset name :func:`build_datasets` makes (``--datasets`` choices)."""


def build_datasets(
    quick: bool,
    half: str = "both",
    path: str | None = None,
    seed: int = 0,
    names: tuple[str, ...] = DATASETS,
) -> list[Dataset]:
    """Every dataset of the harness (or those in ``names``); ``half`` keeps the LoCoMo
    conversations of one half."""
    datasets = synthetic(QUICK_SIZES if quick else SIZES, 1 if quick else 2, seed)
    chosen: tuple[str, ...] = QUICK_CONVERSATIONS if quick else TUNE + HELDOUT
    if half != "both":
        chosen = tuple(c for c in chosen if c in (TUNE if half == "tune" else HELDOUT))
    path = path or str(REPO / "../shared/data/locomo10")
    datasets += locomo(path, chosen)
    datasets += rewrite(
        path, chosen, tuple(s for s in (*REWRITE_SHAPES, *OTEL_SHAPES) if s in names)
    )
    return [d for d in datasets if d.name in names]


Walls = dict[tuple[str, str], float]


def run_rows(
    datasets: list[Dataset], rows: list[Row], concurrency: int
) -> tuple[list[Record], Walls]:
    """Every case of every dataset under every row: records and wall seconds per (dataset, row)."""
    records: list[Record] = []
    walls: Walls = {}
    for dataset in datasets:
        cases = dataset.cases()
        for row in rows:
            got, wall = asyncio.run(
                attribute_all(row.url, row.judge, cases, concurrency=concurrency, row=row.name)
            )
            records += got
            walls[(dataset.name, row.name)] = wall
            ok = sum(type_correct(r) and op_correct(r) for r in got)
            print(
                f"  {dataset.name:18} {row.name:10} {len(got):4} cases  {ok / len(got):.3f} "
                f"joint accuracy  {len(got) / wall:7.1f} cases/s",
                flush=True,
            )
    return records, walls


def run_baseline(
    datasets: list[Dataset], llm: ScriptedLLM, concurrency: int
) -> tuple[list[Record], Walls]:
    records: list[Record] = []
    walls: Walls = {}
    for dataset in datasets:
        answers, wall = asyncio.run(
            flatlog.run(llm.base_url, dataset.flatlog_jobs(), concurrency=concurrency)
        )
        llm.requests.clear()  # the scripted server keeps every (large) prompt
        walls[(dataset.name, "baseline")] = wall
        for ref in dataset.cases():
            a = answers[ref.key]
            records.append(
                {
                    **case_fields(ref, "baseline"),
                    "status": "error" if a.get("error") else "attributed",
                    "error_type": a.get("error_type"),
                    "op_id": a.get("op_id"),
                    "reason": a.get("error"),
                    "llm_calls": a["calls"],
                    "input_tokens": a["input_tokens"],
                    "output_tokens": a["output_tokens"],
                    "seconds": a["seconds"],
                    "latency": a["seconds"],
                    "prompt_chars": a["prompt_chars"],
                }
            )
        n = len(dataset.cases())
        print(f"  {dataset.name:18} baseline   {n:4} cases  {n / wall:7.1f} cases/s", flush=True)
    return records, walls


def run_in_process(
    datasets: list[Dataset], endpoint: Endpoint | None
) -> tuple[list[Record], Walls]:
    """The engine in-process with the heuristic judge, and with the llm judge asking
    ``endpoint`` (the row ``inproc-llm``, when given) at the service's default deferral."""
    makers: dict[str, Any] = {"inproc-heuristic": lambda ref: HeuristicJudge()}
    if endpoint is not None:
        confident = Settings().llm_heuristic_confidence

        def make_llm(ref: CaseRef) -> Judge:
            return llm_judge(endpoint, confident)

        makers["inproc-llm"] = make_llm
    records: list[Record] = []
    walls: Walls = {}
    for dataset in datasets:
        for row, make in makers.items():
            got, wall = asyncio.run(attribute_in_process(dataset, row, make))
            records += got
            walls[(dataset.name, row)] = wall
            print(f"  {dataset.name:18} {row:16} {len(got) / wall:8.1f} cases/s", flush=True)
    return records, walls


def agreement(records: list[Record], a: str, b: str) -> dict[str, Any]:
    """How often two rows gave the same (status, error type, operation) for a case."""
    left = {(r["project"], r["case_id"]): r for r in records if r["judge"] == a}
    right = {(r["project"], r["case_id"]): r for r in records if r["judge"] == b}
    keys = [k for k in left if k in right]

    def same(k: tuple[str, str]) -> bool:
        return all(left[k].get(f) == right[k].get(f) for f in ("status", "error_type", "op_id"))

    differ = [k for k in keys if not same(k)]
    return {"rows": [a, b], "cases": len(keys), "same": len(keys) - len(differ), "differ": differ}


def code_version() -> dict[str, Any]:
    """The commit measured, and whether the engine's code differed from it."""

    def git(*args: str) -> str:
        done = subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True)
        return done.stdout.strip()

    return {
        "commit": git("rev-parse", "--short", "HEAD"),
        "service_modified": bool(git("status", "--porcelain", "service")),
    }


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The options; ``endpoint`` is the one the llm rows ask instead of the oracle, or None."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="small run: 2 sizes, 1 conversation")
    parser.add_argument("--locomo", default="../shared/data/locomo10")
    parser.add_argument("--judges", default="heuristic,llm,llm-all", help="rows to run")
    parser.add_argument("--datasets", default="all", help="comma-separated dataset names")
    parser.add_argument("--no-baseline", action="store_true")
    parser.add_argument("--no-inprocess", action="store_true")
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--half",
        default="both",
        choices=["both", "tune", "heldout"],
        help="LoCoMo conversations 0-4 (tune), 5-9 (heldout) or both",
    )
    add_endpoint_options(parser)
    args = parser.parse_args(argv)
    unknown = set(args.judges.split(",")) - set(ROWS)
    if unknown:
        parser.error(f"unknown judges {sorted(unknown)}; choose from {sorted(ROWS)}")
    args.endpoint = endpoint_of(parser, args)
    return args


@contextmanager
def services(
    local_uri: str, endpoint: Endpoint, names: list[str], workdir: Path, **extra: str
) -> Iterator[dict[str, str]]:
    """The service per row: plain for heuristic, asking ``endpoint`` for the llm rows;
    ``extra`` goes to every service's environment (e.g. the Neo4j credentials)."""
    env = {**extra, **endpoint.env()}
    with ExitStack() as stack:
        urls = {
            "plain": stack.enter_context(run_service(local_uri, workdir, environment=extra)).url
        }
        if "llm" in names:
            urls["llm"] = stack.enter_context(run_service(local_uri, workdir, environment=env)).url
        if "llm-all" in names:
            extra = {**env, "MEMTRACE_LLM_HEURISTIC_CONFIDENCE": "1.01"}
            urls["llm-all"] = stack.enter_context(
                run_service(local_uri, workdir, environment=extra)
            ).url
        yield urls


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    version = code_version()  # before any service starts: the code they load
    names = args.judges.split(",")
    path = str(REPO / args.locomo)  # an absolute --locomo replaces REPO
    print("building datasets ...", flush=True)
    datasets = build_datasets(args.quick, args.half, path, args.seed)
    if args.datasets != "all":
        datasets = [d for d in datasets if d.name in args.datasets.split(",")]
    oracle = Oracle.of([b for d in datasets for b in d.batches])
    sizes = {d.name: d.sizes() for d in datasets}
    for name, s in sizes.items():
        print(f"  {name:18} {s}", flush=True)
    with ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        local = stack.enter_context(fresh_neo4j())
        llm = stack.enter_context(scripted_llm(oracle.answer))  # the baseline's, at least
        asks = args.endpoint or Endpoint(llm.base_url, ORACLE_MODEL)
        urls = stack.enter_context(services(local.uri, asks, names, tmp))
        with httpx.Client(base_url=urls["plain"], timeout=600) as client:
            seconds = sum(ingest(client, d.batches) for d in datasets)
        print(f"ingested in {seconds:.1f} s; attributing ...", flush=True)
        rows = [Row(n, ROWS[n], urls["plain" if n == "heuristic" else n]) for n in names]
        records, walls = run_rows(datasets, rows, args.concurrency)
        llm.requests.clear()
        if not args.no_baseline:
            print("flat-log baseline ...", flush=True)
            got, more = run_baseline(datasets, llm, args.concurrency)
            records += got
            walls.update(more)
        if not args.no_inprocess:
            print("engine in-process ...", flush=True)
            got, more = run_in_process(datasets, asks if "llm" in names else None)
            records += got
            walls.update(more)
    fig = make_figures(records, walls, sizes)
    fig["command"] = " ".join([COMMAND, *redacted(sys.argv[1:] if argv is None else argv)])
    fig["code"] = version
    fig["config"] = {
        "concurrency": args.concurrency,
        "seed": args.seed,
        "sizes (sessions, distractors)": QUICK_SIZES if args.quick else SIZES,
        "rows": names,
        "llm_rows_ask": args.endpoint.described() if args.endpoint else ORACLE_MODEL,
    }
    fig["oracle"] = {
        **oracle.stats,
        "cases_with_a_carrier_hidden_by_clipping": oracle.clipped_by_system(),
    }
    if not args.no_inprocess:
        fig["in_process_agreement"] = [
            agreement(records, row, f"inproc-{row}") for row in ("heuristic", "llm") if row in names
        ]
    report = markdown(fig)
    print("\n" + report)
    save("attribution_accuracy", fig)
    (RESULTS / "attribution_accuracy.md").write_text(report + "\n")
    with (RESULTS / "attribution_accuracy_cases.jsonl").open("w") as out:
        out.writelines(json.dumps(r) + "\n" for r in records)
    print(f"written to {RESULTS}/attribution_accuracy.json, .md and _cases.jsonl")
