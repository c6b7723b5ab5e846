"""Measure the table of :mod:`service.attribution.confidence` on the LoCoMo tuning half.

Every case is attributed in-process with the heuristic judge; each result's kind, whether the
case gave its evidence, and its least sure verdict are recorded next to whether it named the
labelled operation. Per (kind, given) the accuracy at each level of ``sure`` (levels with fewer
than ``--min-cases`` pooled into the next lower one, then made monotone) is printed as the table
to paste. Never run it on the held-out half: that half measures the table.

Run: ``python -m benchmarks.attribution calibrate``.
"""

from __future__ import annotations

import argparse
import asyncio
from collections import defaultdict
from typing import Any

from benchmarks.attribution import inprocess
from benchmarks.attribution.metrics import op_correct
from benchmarks.attribution.tune import _datasets
from service.attribution import engine
from service.attribution.judges.heuristic import HeuristicJudge

DATASETS = "locomo,locomo-rag,locomo-long-context"


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
    out: list[tuple[float, float, int]] = []
    for floor, oks in pooled:  # a lower level never claims more than the one above it
        acc = sum(oks) / len(oks)
        if out and acc > out[-1][1]:
            acc = out[-1][1]
        out.append((floor, acc, len(oks)))
    return out


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
        return await real_attribute(case, *rest)

    def calibrated(kind: str, sure: float, *, given: bool, **llm: Any) -> float:
        calls[(current["project"], current["case"])] = (kind, sure, given)
        return float(real_calibrated(kind, sure, given=given, **llm))

    setattr(inprocess, "attribute", attribute)  # noqa: B010
    setattr(engine, "calibrated", calibrated)  # noqa: B010
    seen: dict[tuple[str, bool], list[tuple[float, bool]]] = defaultdict(list)
    for dataset in _datasets(args.datasets.split(","), "tune", quick=False):

        def judge(ref: Any) -> HeuristicJudge:
            current["project"] = ref.project
            return HeuristicJudge()

        records, _ = asyncio.run(inprocess.attribute_in_process(dataset, "cal", judge))
        for r in records:
            found = calls.get((r["project"], r["case_id"]))
            if found is not None and r["status"] == "attributed":
                kind, sure, given = found
                seen[(kind, given)].append((sure, op_correct(r)))
    print("TABLE = {")
    for key in sorted(seen):
        levels = _levels(seen[key], args.min_cases)
        cells = ", ".join(f"({f:.2f}, {int(a * 100) / 100:.2f})" for f, a, _ in levels)
        counts = ", ".join(str(n) for *_, n in levels)
        print(f"    {key!r}: ({cells},),  # cases {counts}")
    print("}")
