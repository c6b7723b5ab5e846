"""The engine in-process on chosen datasets with the heuristic and the oracle judge: accuracy per
dataset, half and judge, and the misses. For iterating on the walk and the judge without Neo4j;
tune on the tuning half only (LoCoMo conversations 0-4), never on the held-out half.

Run: ``python -m benchmarks.attribution tune --datasets locomo --half tune --misses 20``. Per
dataset and judge: the cases as built (some name their evidence), then the same cases with no
hints (the headline) and with every case hinted (:mod:`.hints`): op and type accuracy, precision
and coverage of ``attributed``, op accuracy by what the labelled carriers say (:mod:`.stated`),
and the labelled-by-predicted type matrix without hints. With
``--llm-base-url URL --llm-model NAME [--llm-api-key KEY]`` the ``llm`` and ``llm-all`` judges are
the service's llm judge asking that endpoint over HTTP (:mod:`.endpoint`) instead of the oracle.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from collections import Counter
from collections.abc import Callable
from typing import Any

from benchmarks.attribution.endpoint import add_endpoint_options, endpoint_of, llm_judge
from benchmarks.attribution.hints import has_hints, with_hints, without_hints
from benchmarks.attribution.inprocess import attribute_in_process
from benchmarks.attribution.metrics import (
    Record,
    attributed_quality,
    confusion_matrix,
    markdown_table,
    op_correct,
    reliability,
    type_correct,
)
from benchmarks.attribution.oracle import (
    CaseTruth,
    Oracle,
    OracleJudge,
    hidden_by_clipping,
    units_in_prompt,
)
from benchmarks.attribution.run import CaseRef, Dataset
from benchmarks.attribution.stated import by_statement, statement_classes
from service.attribution.judges.base import Judge, Question, UnitText, Verdict
from service.attribution.judges.heuristic import HeuristicJudge
from service.attribution.judges.llm import LLMJudge, build_messages
from service.attribution.judges.llm_prompt import output_allowance
from service.llm.client import connections
from service.llm.text import estimate_tokens
from service.settings import Settings

HIDDEN: Counter[str] = Counter()
"""Carriers shown to the LLM, and those whose shown (clipped) content no longer held the fact."""
HIDDEN_CASES: set[tuple[str, str]] = set()

OUTPUT_TOKENS_PER_UNIT = 12
"""What the oracle's JSON answer costs per unit (``{"id": "u-...", "carries": true}``)."""


class OracleLLMJudge(LLMJudge):
    """The service's llm judge (heuristic first, deferring below ``confident``) with the oracle
    in place of the endpoint: same deferral and budget, no HTTP. Tokens are estimated from the
    prompt the service would send (``service.llm.text.estimate_tokens``)."""

    _settings: Settings | None = None
    _client: Any = None  # one idle client for every case (the oracle answers, not HTTP)

    def __init__(self, truth: CaseTruth | None, confident: float) -> None:
        if OracleLLMJudge._settings is None:
            OracleLLMJudge._settings = Settings()
            OracleLLMJudge._client = connections("http://oracle.invalid/v1", "-", 1.0)
        settings = OracleLLMJudge._settings
        super().__init__(
            base_url="http://oracle.invalid/v1",
            api_key="unused",
            model="oracle",
            timeout_s=1.0,
            max_calls=settings.attribution_max_llm_calls,
            max_tokens=settings.attribution_max_tokens,
            pre=HeuristicJudge(),
            confident=confident,
            connections=OracleLLMJudge._client,
        )
        self._oracle = OracleJudge(truth)

    async def _ask(self, question: Question, units: list[UnitText]) -> dict[str, bool]:
        messages = build_messages(question, units, self.max_unit_chars)
        if not self._fits_budget(messages, output_allowance([u.id for u in units])):
            return {}
        self.cost.llm_calls += 1
        spent = estimate_tokens(messages), OUTPUT_TOKENS_PER_UNIT * len(units) + 8
        self.cost.input_tokens += spent[0]
        self.cost.output_tokens += spent[1]
        self._tokens_spent += sum(spent)
        verdicts = await self._oracle.judge(question, units)
        truth = self._oracle.truth
        if truth is not None:  # would a real LLM have seen the fact in what the prompt shows?
            shown = units_in_prompt(str(messages[-1]["content"]))
            for uid, content in shown.items():
                if uid in truth.carriers:
                    HIDDEN["carriers"] += 1
                    if hidden_by_clipping(content, list(truth.needles)):
                        HIDDEN["hidden"] += 1
                        HIDDEN_CASES.add((truth.project, truth.case_id))
        return {uid: bool(v.carries) for uid, v in verdicts.items()}


class VerdictLog:
    """Every heuristic verdict next to the oracle's: is a verdict's confidence its accuracy?"""

    def __init__(self) -> None:
        self.seen: list[tuple[float, bool]] = []
        self.rows: list[dict[str, Any]] = []  # per verdict, for fitting the confidence

    def judge_for(self, truth: CaseTruth | None) -> HeuristicJudge:
        log, inner = self, HeuristicJudge()
        carriers = truth.carriers if truth else frozenset()

        class Logged(HeuristicJudge):
            async def judge(self, question: Question, units: list[UnitText]) -> dict[str, Verdict]:
                out = await inner.judge(question, units)
                log.seen += [
                    (v.confidence, bool(v.carries) == (u in carriers)) for u, v in out.items()
                ]
                for unit in units:
                    score, topic = inner.assess(question, unit.content, unit.ts, unit.kind)
                    log.rows.append(
                        {
                            "kind": unit.kind,
                            "score": score,
                            "topic": topic,
                            "conf": out[unit.id].confidence,
                            "truth": unit.id in carriers,
                        }
                    )
                return out

        return Logged()

    def table(self) -> list[str]:
        rows = []
        for lo, hi in ((0.0, 0.6), (0.6, 0.8), (0.8, 0.9), (0.9, 0.95), (0.95, 1.01)):
            hits = [ok for c, ok in self.seen if lo <= c < hi]
            if hits:
                rows.append(
                    f"   verdict confidence [{lo}, {hi}): {len(hits):6} {sum(hits) / len(hits):.3f}"
                )
        return rows


def _datasets(names: list[str], half: str, quick: bool) -> list[Dataset]:
    from benchmarks.attribution.accuracy import DATASETS, build_datasets

    chosen = DATASETS if "all" in names else tuple(names)
    return build_datasets(quick=quick, half=half, names=chosen)


HINTS = ("built", "none", "all")
"""The cases as built, with no evidence hints, with every case hinted."""


def _figures(records: list[Record]) -> str:
    n = len(records) or 1
    quality = attributed_quality(records)
    return (
        f"op {sum(map(op_correct, records)) / n:.3f}  "
        f"type {sum(map(type_correct, records)) / n:.3f}"
        f"  attributed precision {quality['precision']}  coverage {quality['coverage']}"
    )


def _row(name: str, judge: str, runs: dict[str, tuple[list[Record], float]]) -> list[Any]:
    """The summary table's row: the no-hints figures first (the headline), then with hints. The
    type, precision, coverage and speed columns are the no-hints run's; with ``--hints`` naming
    no such run, the cases as built, else the run with every case hinted."""

    def op(hints: str) -> Any:
        records = runs.get(hints, ([], 0.0))[0]
        return round(sum(map(op_correct, records)) / len(records), 3) if records else ""

    records, wall = runs.get("none") or runs.get("built") or runs["all"]
    quality = attributed_quality(records)
    n = len(records) or 1
    return [
        name,
        judge,
        len(records),
        op("none"),
        op("all"),
        op("built"),
        round(sum(map(type_correct, records)) / n, 3),
        quality["precision"] if quality["precision"] is not None else "",
        quality["coverage"] if quality["coverage"] is not None else "",
        round(len(records) / wall) if wall else "",
    ]


SUMMARY_HEADERS = [
    "dataset",
    "judge",
    "cases",
    "op, no hints",
    "op, hints",
    "op, as built",
    "type, no hints",
    "attributed precision",
    "attributed coverage",
    "cases/s",
]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--datasets", default="all", help="comma-separated, or all")
    parser.add_argument(
        "--hints",
        default=",".join(HINTS),
        help="which runs of each dataset: built (as built), none (no hints), all (every case "
        "hinted); default %(default)s",
    )
    parser.add_argument("--half", default="tune", choices=["tune", "heldout", "both"])
    parser.add_argument("--judges", default="oracle,heuristic")
    parser.add_argument("--misses", type=int, default=10)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument(
        "--sample", type=int, default=0, help="only this many cases per dataset (evenly spaced)"
    )
    parser.add_argument("--verdict-log", help="append every heuristic verdict (JSONL) here")
    parser.add_argument("--records", help="append every case's record (JSONL) here")
    parser.add_argument(
        "--confident",
        type=float,
        default=Settings().llm_heuristic_confidence,
        help="the llm row's MEMTRACE_LLM_HEURISTIC_CONFIDENCE",
    )
    add_endpoint_options(parser)
    args = parser.parse_args(argv)
    endpoint = endpoint_of(parser, args)
    from benchmarks.attribution.accuracy import DATASETS

    unknown = set(args.datasets.split(",")) - {"all", *DATASETS}
    if unknown:
        parser.error(f"unknown datasets {sorted(unknown)}; choose from all, {', '.join(DATASETS)}")
    variants = [h for h in HINTS if h in args.hints.split(",")]
    if not variants:
        parser.error(f"--hints: choose from {', '.join(HINTS)}")
    datasets = _datasets(args.datasets.split(","), args.half, args.quick)
    # An oracle per data set: two shapes of one conversation may share ids (an OpenTelemetry
    # trace's are made from content), which one oracle over all could not tell apart.
    oracles = {d.name: Oracle.of(d.batches) for d in datasets}
    oracle = Oracle(by_case={k: t for o in oracles.values() for k, t in o.by_case.items()})
    classes = {
        k: c for d in datasets for k, c in statement_classes(d.batches, oracles[d.name]).items()
    }
    log = VerdictLog()

    def truth(ref: CaseRef) -> CaseTruth | None:
        return oracle.by_case.get((ref.project, ref.case_id))

    def llm_row(confident: float) -> Callable[[CaseRef], Judge]:
        """The llm judge deferring below ``confident``: the endpoint's if one is given, else
        the oracle in the endpoint's place."""
        if endpoint is not None:
            return lambda ref: llm_judge(endpoint, confident)
        return lambda ref: OracleLLMJudge(truth(ref), confident)

    makers: dict[str, Any] = {
        "heuristic": lambda ref: HeuristicJudge(),
        "verdicts": lambda ref: log.judge_for(truth(ref)),
        "llm": llm_row(args.confident),
        "llm-all": llm_row(1.01),
        "oracle": lambda ref: OracleJudge(oracle.by_case.get((ref.project, ref.case_id))),
    }
    summary: list[list[Any]] = []
    for dataset in datasets:
        for judge in args.judges.split(","):
            runs: dict[str, tuple[list[Record], float]] = {}
            shown = {
                "built": dataset,
                "none": without_hints(dataset),
                "all": with_hints(dataset, oracle),
            }
            for hints in variants:
                if hints == "none" and "built" in runs and not has_hints(dataset):
                    built, seconds = runs["built"]  # as built, no case is hinted
                    runs["none"] = [{**r, "hints": "none"} for r in built], seconds
                    continue
                got, seconds = asyncio.run(
                    attribute_in_process(shown[hints], judge, makers[judge], args.sample)
                )
                runs[hints] = [{**r, "hints": hints} for r in got], seconds
            if args.records:
                with open(args.records, "a") as out:
                    for got, _ in runs.values():
                        out.writelines(json.dumps(r) + "\n" for r in got)
            summary.append(_row(dataset.name, judge, runs))
            records, wall = runs.get("built") or runs.get("none") or runs["all"]
            n = len(records) or 1
            ok = [op_correct(r) for r in records]
            print(
                f"{dataset.name:22} {judge:10} {len(records):4} cases  op {sum(ok) / n:.3f}  "
                f"type {sum(map(type_correct, records)) / n:.3f}  "
                f"{Counter(r['status'] for r in records)}  {len(records) / wall:.0f} cases/s  "
                f"calls {sum(r['llm_calls'] for r in records) / n:.2f}  "
                f"in-tokens {sum(r['input_tokens'] for r in records) / n:.0f}  "
                f"out-tokens {sum(r['output_tokens'] for r in records) / n:.0f}  "
                f"llm verdicts {sum(r['llm_verdicts'] for r in records) / n:.2f}  "
                f"failed calls {sum(r['llm_failures'] for r in records) / n:.2f}  "
                f"s/case {wall / n:.2f}"
            )
            if HIDDEN["carriers"]:
                print(
                    f"   carriers shown to the LLM {HIDDEN['carriers']}, fact cut out of "
                    f"{HIDDEN['hidden']} in {len(HIDDEN_CASES)} cases"
                )
                HIDDEN.clear()
                HIDDEN_CASES.clear()
            if judge == "verdicts":
                print("\n".join(log.table()))
                log.seen.clear()
                if args.verdict_log:
                    with open(args.verdict_log, "a") as out:
                        out.writelines(
                            json.dumps({"dataset": dataset.name, **row}) + "\n" for row in log.rows
                        )
                log.rows.clear()
            for b in reliability(records):
                print(f"   confidence {b['bucket']:12} {b['cases']:4} cases  op {b['op_accuracy']}")
            misses = [r for r in records if not op_correct(r)]
            by = Counter((r["label_type"], r["error_type"]) for r in misses)
            print("   misses (label, got):", dict(by.most_common()))
            for r in misses[: args.misses]:
                print(
                    f"   {r['project']}/{r['case_id']} label {r['label_type']} {r['label_op']} "
                    f"got {r['status']} {r['error_type']} {r['op_id']} {r['confidence']}: "
                    f"{r['reason']}"
                )
            for hints in ("none", "all"):
                if hints in runs:
                    print(f"   hints {hints:5} {_figures(runs[hints][0])}")
                    said = by_statement(runs[hints][0], classes)
                    print(f"   hints {hints:5} op by what the labelled carriers say: {said}")
            if "none" in runs:
                print("   labelled (rows) by predicted (columns), no hints:")
                print("\n".join("     " + line for line in confusion_matrix(runs["none"][0])))
    print(f"\nhalf {args.half}; headline: no hints\n")
    print(markdown_table(SUMMARY_HEADERS, summary))


def case_ref_key(ref: CaseRef) -> tuple[str, str]:
    return ref.project, ref.case_id
