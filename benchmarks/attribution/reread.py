"""A second reading of the LoCoMo observation labels: how often does the dataset's label agree
with a careful reading of the texts, and how often does the heuristic judge?

The observations dataset labels a case from the extractor's citations: an observation citing
the evidence turn counts as carrying the answer. Many such observations cite the turn for
another of its facts ("Melanie and her kids enjoy nature-inspired painting projects" for "What
did Mel and her kids paint?" -> "a sunset with a palm tree"), so a label may blame the retrieval
for missing a memory that never held the answer. This script measures how often.

1. ``--dump FILE``: 60 failed cases drawn at random (seed 7) from the held-out half (LoCoMo
   conversations 44, 47, 48, 49, 50), each with its question, expected answer, evidence turn,
   the memories extracted from that turn's session and the context the answer was written from:
   what a reader needs, and nothing of the label or of MemTrace's answer.
2. A reader answers, per case, whether the context and whether any of those memories state what
   the question needs (``yes``, ``no``, or ``event-only`` for a "when" question whose text names
   the event but not its date); ``benchmarks/attribution/locomo_reread.jsonl`` holds those answers
   (keys and answers only, no LoCoMo text).
3. Without ``--dump``: the reading gives each case an error type (context states it:
   ResponseError; else a memory does: RetrievalError; else ExtractionError), counted strictly
   (``event-only`` is not stated) and leniently (it is), and compared with the dataset's label and
   with the heuristic judge's result (in-process). Figures go to
   ``benchmarks/results/attribution_reread.json``.

The reading covers the memories of the evidence turn's session only; a memory from another
session stating the answer would make a strict ExtractionError a RetrievalError.

Run: ``python -m benchmarks.attribution reread [--dump FILE]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
from collections import Counter
from pathlib import Path
from typing import Any

from benchmarks.attribution.flatlog import batch_units
from benchmarks.attribution.inprocess import attribute_in_process
from benchmarks.attribution.tune import _datasets
from benchmarks.figures import save
from service.attribution.judges.heuristic import HeuristicJudge

ANSWERS = Path(__file__).parent / "locomo_reread.jsonl"
SAMPLE, SEED = 60, 7


def _ids(refs: list[Any]) -> list[str]:
    return [r["id"] if isinstance(r, dict) else r for r in refs]


def sample() -> list[dict[str, Any]]:
    """The cases a reader gets, in the order they were drawn."""
    out = []
    for dataset in _datasets(["locomo"], "heldout", quick=False):
        for item in dataset.batches:
            units, ops = batch_units(item.batch), item.batch["operations"]
            contexts = {
                answer: [u for u in _ids(op["inputs"]) if units[u]["kind"] == "context"]
                for op in ops
                if op["kind"] == "response"
                for answer in _ids(op["outputs"])
            }
            message_of = {
                (u.get("attributes") or {}).get("dia_id"): uid
                for uid, u in units.items()
                if u.get("kind") == "message"
            }
            for case in item.batch["cases"]:
                if case["id"] not in item.labels:
                    continue
                turn = message_of[item.hidden["evidence"][case["id"]]]
                extractions = [
                    op for op in ops if op["kind"] == "extraction" and turn in _ids(op["inputs"])
                ]
                out.append(
                    {
                        "key": f"{item.batch['project']}/{case['id']}",
                        "question": case["question"],
                        "expected_answer": case["expected_answer"],
                        "evidence_turn": units[turn]["content"],
                        "evidence_said_at": units[turn].get("ts"),
                        "memories_written_from_that_session": [
                            units[u]["content"] for op in extractions for u in _ids(op["outputs"])
                        ],
                        "context_given_to_the_answer_model": [
                            units[u]["content"] for u in contexts.get(case["answer_unit"], [])
                        ],
                    }
                )
    random.Random(SEED).shuffle(out)
    return out[:SAMPLE]


def read_type(answer: dict[str, str], lenient: bool) -> str:
    """The error type a reading gives: where the information was last stated."""
    states = {"yes", "event-only"} if lenient else {"yes"}
    if answer["context"] in states:
        return "ResponseError"
    if answer["memories"] in states:
        return "RetrievalError"
    return "ExtractionError"


def compare() -> dict[str, Any]:
    answers = {a["key"]: a for a in map(json.loads, ANSWERS.read_text().splitlines())}
    dataset = _datasets(["locomo"], "heldout", quick=False)[0]
    records, _ = asyncio.run(attribute_in_process(dataset, "heuristic", lambda _: HeuristicJudge()))
    by_key = {f"{r['project']}/{r['case_id']}": r for r in records}
    out: dict[str, Any] = {"cases": len(answers), "answers": {}}
    for side in ("context", "memories"):
        out["answers"][side] = dict(Counter(a[side] for a in answers.values()))
    for reading in ("strict", "lenient"):
        agree: Counter[str] = Counter()
        pairs: Counter[str] = Counter()
        for key, answer in answers.items():
            r, read = by_key[key], read_type(answer, reading == "lenient")
            agree["label_vs_reading"] += r["label_type"] == read
            agree["heuristic_vs_reading"] += r["error_type"] == read
            agree["heuristic_vs_label"] += r["error_type"] == r["label_type"]
            pairs[f"label {r['label_type']} / reading {read}"] += 1
        n = len(answers)
        out[reading] = {
            **{k: round(v / n, 3) for k, v in agree.items()},
            "label_vs_reading_pairs": dict(sorted(pairs.items())),
        }
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--dump", type=Path, help="write the sample for a reader here and stop")
    args = parser.parse_args(argv)
    if args.dump:
        args.dump.write_text("".join(json.dumps(c) + "\n" for c in sample()))
        print(f"{SAMPLE} cases written to {args.dump}")
        return
    figures = compare()
    for reading in ("strict", "lenient"):
        f = figures[reading]
        print(
            f"{reading:8} type agreement over {figures['cases']} cases: label/reading "
            f"{f['label_vs_reading']}, heuristic/reading {f['heuristic_vs_reading']}, "
            f"heuristic/label {f['heuristic_vs_label']}"
        )
        for pair, count in f["label_vs_reading_pairs"].items():
            print(f"   {pair}: {count}")
    print(f"written to {save('attribution_reread', figures)}")
