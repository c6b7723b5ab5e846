"""The same cases with and without evidence hints, for figures that compare like with like.

A case may name the units known to hold the needed fact (``evidence_units``); the datasets name
them for some cases (half of the synthetic and LoCoMo ones, none of the rewrite set's), so an
accuracy over the cases as built mixes the two. :func:`without_hints` strips every case's hints;
:func:`with_hints` gives every case the source messages the oracle counts as carrying its fact
(the evidence turn, for LoCoMo). Ids, projects and labels are unchanged.
"""

from __future__ import annotations

from typing import Any

from benchmarks.attribution.flatlog import batch_units
from benchmarks.attribution.oracle import Oracle
from benchmarks.attribution.run import Dataset
from benchmarks.datasets import LabelledBatch


def _with_cases(item: LabelledBatch, cases: list[dict[str, Any]]) -> LabelledBatch:
    return LabelledBatch({**item.batch, "cases": cases}, item.labels, item.hidden)


def without_hints(dataset: Dataset) -> Dataset:
    """``dataset`` with no case naming evidence units."""
    return Dataset(
        dataset.name,
        [
            _with_cases(item, [{**c, "evidence_units": []} for c in item.batch["cases"]])
            for item in dataset.batches
        ],
    )


def with_hints(dataset: Dataset, oracle: Oracle) -> Dataset:
    """``dataset`` with every labelled case naming the messages that carry its fact."""
    out = []
    for item in dataset.batches:
        units = batch_units(item.batch)
        project = item.batch["project"]
        cases = []
        for case in item.batch["cases"]:
            truth = oracle.by_case.get((project, case["id"]))
            hints = (
                sorted(u for u in truth.carriers if units.get(u, {}).get("kind") == "message")
                if truth
                else list(case.get("evidence_units") or [])
            )
            cases.append({**case, "evidence_units": hints})
        out.append(_with_cases(item, cases))
    return Dataset(dataset.name, out)


def has_hints(dataset: Dataset) -> bool:
    """Whether any case of ``dataset`` names evidence units as built."""
    return any(c.get("evidence_units") for item in dataset.batches for c in item.batch["cases"])
