"""Measure the table of :mod:`service.attribution.confidence` on the tuning half (LoCoMo
conversations 0-4: the observations, RAG, long-context and store-rewriting traces).

Every case is attributed in-process with the heuristic judge, once with no case naming its
evidence and once with every case naming it; each ``attributed`` result's kind,
whether the case gave its evidence, and its least sure verdict (the first walk's: the one
reported) are recorded next to whether it named the labelled operation. Per (kind, given) the
accuracy at each level of ``sure`` (levels with fewer than ``--min-cases`` pooled into the next
lower one, then made monotone by pooling adjacent violators) is printed as the table to paste; a
kind seen fewer than ``--min-cases`` times claims at most :data:`FEW_CASES_CLAIM`. Never run it
on the held-out half: that half measures the table.

Run: ``python -m benchmarks.attribution calibrate``.
"""

from __future__ import annotations

import argparse
import asyncio
from collections import defaultdict
from typing import Any

from benchmarks.attribution import inprocess
from benchmarks.attribution.hints import with_hints, without_hints
from benchmarks.attribution.metrics import op_correct
from benchmarks.attribution.oracle import Oracle
from benchmarks.attribution.tune import _datasets
from service.attribution import engine
from service.attribution.judges.heuristic import HeuristicJudge

DATASETS = "locomo,locomo-rag,locomo-long-context,rewrite"
FEW_CASES_CLAIM = 0.5
"""The most a kind of result seen fewer than ``--min-cases`` times is said to be right."""


def _levels(seen: list[tuple[float, bool]], min_cases: int) -> list[tuple[float, float, int]]:
    """(floor, accuracy, cases) from the highest level down, each with enough cases, monotone."""
    by_level: dict[float, list[bool]] = defaultdict(list)
    for sure, ok in seen:
        by_level[round(sure, 3)].append(ok)
    pooled: list[tuple[float, list[bool]]] = []
    carry: list[bool] = []
    for level in sorted(by_level, reverse=True):
        carry += by_level[level]
        if len(carry) >= min_cases:
            pooled.append((level, carry))
            carry = []
    if carry and pooled:
        pooled[-1] = (min(by_level), pooled[-1][1] + carry)
    elif carry:
        pooled.append((min(by_level), carry))
    # A lower level never claims more than the one above it: where it would, the two are one
    # level (pooled, the lower floor), and so on upwards while that level still claims more
    # than the one above (pool adjacent violators). Capping the lower level at the upper one's
    # share instead would report a large level by a small one's: 97 RetrievalErrors at 0.50
    # right 0.75 of the time, capped at the 0.26 of 23 at 0.55.
    blocks: list[tuple[float, list[bool]]] = []
    for floor, oks in pooled:
        while blocks and sum(oks) / len(oks) > sum(blocks[-1][1]) / len(blocks[-1][1]):
            oks = blocks.pop()[1] + oks
        blocks.append((floor, oks))
    return [(floor, sum(oks) / len(oks), len(oks)) for floor, oks in blocks]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--datasets", default=DATASETS)
    parser.add_argument("--min-cases", type=int, default=15)
    args = parser.parse_args(argv)
    current: dict[str, Any] = {}
    calls: dict[tuple[str, str], tuple[str, float, bool]] = {}
    # wrapped where they are looked up, to learn each result's kind and least sure verdict
    real_attribute = getattr(inprocess, "attribute")  # noqa: B009
    real_calibrated = getattr(engine, "calibrated")  # noqa: B009

    async def attribute(case: Any, *rest: Any) -> Any:
        current["case"] = case.id
        calls.pop((current["project"], case.id), None)
        return await real_attribute(case, *rest)

    def calibrated(kind: str, sure: float, *, given: bool, **llm: Any) -> float:
        # The first walk's: its result is the one reported. A result the walk calls attributed
        # is walked again at a stricter line (``second_reading``), whose verdicts may be surer or
        # less so; that walk's call comes second and must not replace the first's.
        calls.setdefault((current["project"], current["case"]), (kind, sure, given))
        return float(real_calibrated(kind, sure, given=given, **llm))

    setattr(inprocess, "attribute", attribute)  # noqa: B010
    setattr(engine, "calibrated", calibrated)  # noqa: B010
    seen: dict[tuple[str, bool], list[tuple[float, bool]]] = defaultdict(list)

    def judge(ref: Any) -> HeuristicJudge:
        current["project"] = ref.project
        return HeuristicJudge()

    for dataset in _datasets(args.datasets.split(","), "tune", quick=False):
        # no case names its evidence (as most users send them), then every case does: the
        # table's two halves, each measured on the runs it is used for
        shown = (without_hints(dataset), with_hints(dataset, Oracle.of(dataset.batches)))
        for variant in shown:  # each run's calls read before the next run records its own
            records, _ = asyncio.run(inprocess.attribute_in_process(variant, "cal", judge))
            for r in records:
                found = calls.get((r["project"], r["case_id"]))
                if found is not None and r["status"] == "attributed":
                    kind, sure, given = found
                    seen[(kind, given)].append((sure, op_correct(r)))
    print("TABLE = {")
    for key in sorted(seen):
        levels = _levels(seen[key], args.min_cases)
        if len(seen[key]) < args.min_cases:  # too few to claim more than a coin toss
            levels = [(f, min(a, FEW_CASES_CLAIM), n) for f, a, n in levels]
        cells = ", ".join(f"({f:.2f}, {int(a * 100) / 100:.2f})" for f, a, _ in levels)
        counts = ", ".join(str(n) for *_, n in levels)
        print(f"    {key!r}: ({cells},),  # cases {counts}")
    print("}")
