"""The engine in-process on chosen datasets with the heuristic and the oracle judge: accuracy per
dataset, half and judge, and the misses. For iterating on the walk and the judge without Neo4j;
tune on the tuning half only (LoCoMo conversations 0-4), never on the held-out half.

Run: ``python -m benchmarks.attr_tune --datasets locomo --half tune --misses 20``.
"""

from __future__ import annotations

import argparse
import asyncio
from collections import Counter
from typing import Any

from benchmarks.attr_inprocess import attribute_in_process
from benchmarks.attr_metrics import op_correct, reliability, type_correct
from benchmarks.attr_run import CaseRef, Dataset
from benchmarks.oracle import Oracle, OracleJudge
from service.attribution.judges.heuristic import HeuristicJudge


def _datasets(names: list[str], half: str, quick: bool) -> list[Dataset]:
    from benchmarks.attribution import build_datasets

    return [d for d in build_datasets(quick=quick, half=half) if d.name in names or "all" in names]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--datasets", default="all")
    parser.add_argument("--half", default="tune", choices=["tune", "heldout", "both"])
    parser.add_argument("--judges", default="oracle,heuristic")
    parser.add_argument("--misses", type=int, default=10)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    datasets = _datasets(args.datasets.split(","), args.half, args.quick)
    oracle = Oracle.of([b for d in datasets for b in d.batches])
    makers: dict[str, Any] = {
        "heuristic": lambda ref: HeuristicJudge(),
        "oracle": lambda ref: OracleJudge(oracle.by_case.get((ref.project, ref.case_id))),
    }
    for dataset in datasets:
        for judge in args.judges.split(","):
            records, wall = asyncio.run(attribute_in_process(dataset, judge, makers[judge]))
            n = len(records) or 1
            ok = [op_correct(r) for r in records]
            print(
                f"{dataset.name:22} {judge:10} {len(records):4} cases  op {sum(ok) / n:.3f}  "
                f"type {sum(map(type_correct, records)) / n:.3f}  "
                f"{Counter(r['status'] for r in records)}  {len(records) / wall:.0f} cases/s"
            )
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


def case_ref_key(ref: CaseRef) -> tuple[str, str]:
    return ref.project, ref.case_id


if __name__ == "__main__":
    main()
