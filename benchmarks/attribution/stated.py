"""Op accuracy split by what the labelled carriers say: where a lexical judge can follow the
information and where it cannot.

The labels count a unit as carrying a case's information by construction (it holds the evidence
turn, an observation citing it, or the answer phrase). A memory or context can carry it that way
without stating the answer in words: an observation written from the evidence turn that kept the
event but not its date ("Jon got mentored by a business person"), or one the answer is inferred
from ("Melanie enjoys classical music" for "Would she enjoy Vivaldi?"). A judge reading words
cannot tell those from a unit about the same topic, so its accuracy is reported per class:

- ``stated``: some labelled memory or context holds at least half of the answer's own words
  (those the question does not already have);
- ``unstated``: the labelled memories and contexts carry it, none of them in the answer's words;
- ``never kept``: no memory or context carries it (the case's information was never extracted).

The class is a property of the case and its labels, never of what the engine did.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from benchmarks.attribution.flatlog import batch_units
from benchmarks.attribution.metrics import Record, op_correct
from benchmarks.attribution.oracle import Oracle
from benchmarks.datasets import LabelledBatch
from service.text import content_tokens

CLASSES = ("stated", "unstated", "never kept")
KEPT_KINDS = frozenset({"memory", "context"})


def statement_classes(
    batches: Iterable[LabelledBatch], oracle: Oracle
) -> dict[tuple[str, str], str]:
    """Each labelled case's class, by (project, case id)."""
    out: dict[tuple[str, str], str] = {}
    for item in batches:
        units = batch_units(item.batch)
        project = item.batch["project"]
        for case in item.batch["cases"]:
            truth = oracle.by_case.get((project, case["id"]))
            if truth is None:
                continue
            answer = content_tokens(case["expected_answer"])
            own = answer - content_tokens(case["question"]) or answer
            kept = [
                content_tokens(units[u].get("content", ""))
                for u in truth.carriers
                if units.get(u, {}).get("kind") in KEPT_KINDS
            ]
            if not kept:
                out[(project, case["id"])] = "never kept"
            elif own and any(len(own & words) >= len(own) / 2 for words in kept):
                out[(project, case["id"])] = "stated"
            else:
                out[(project, case["id"])] = "unstated"
    return out


def by_statement(records: list[Record], classes: dict[tuple[str, str], str]) -> str:
    """One line: per class, cases and op accuracy."""
    cases: Counter[str] = Counter()
    right: Counter[str] = Counter()
    for r in records:
        cls = classes.get((r["project"], r["case_id"]))
        if cls is not None:
            cases[cls] += 1
            right[cls] += op_correct(r)
    return "  ".join(
        f"{cls} {right[cls]}/{cases[cls]} = {right[cls] / cases[cls]:.3f}"
        for cls in CLASSES
        if cases[cls]
    )
