"""Ground-truth labels and the container that keeps them apart from the trace they describe.

A labelled dataset is useless for evaluation if the attributor can read the answer off the trace,
so a :class:`LabelledBatch` holds the ``TraceBatch``-shaped dict (what is sent to ``POST /traces``)
and, separately, the labels and any hidden facts used to compute them.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypedDict

ErrorType = Literal[
    "ExtractionError", "UpdateError", "DeletionError", "RetrievalError", "ResponseError"
]
ERROR_TYPES: tuple[ErrorType, ...] = (
    "ExtractionError",
    "UpdateError",
    "DeletionError",
    "RetrievalError",
    "ResponseError",
)

#: Operation kinds an error type may be blamed on (``graph_schema.OperationKind`` values).
KINDS_FOR_ERROR: dict[ErrorType, frozenset[str]] = {
    "ExtractionError": frozenset({"extraction"}),
    "UpdateError": frozenset({"update"}),
    "DeletionError": frozenset({"update", "deletion"}),
    "RetrievalError": frozenset({"retrieval"}),
    "ResponseError": frozenset({"response"}),
}

PASSED = "passed"


class Label(TypedDict):
    """The annotation of one failed case: what went wrong, where, in which system."""

    error_type: ErrorType
    operation_id: str
    system: str


@dataclass(frozen=True)
class LabelledBatch:
    """One trace graph with its ground truth.

    ``batch`` validates as ``memtrace_client.models.TraceBatch`` and carries no ground truth.
    ``labels`` maps the id of every *failed* case to its label; passed cases have no label.
    ``hidden`` holds generator-side facts kept out of the batch (e.g. LoCoMo's observation
    citations, or the statement of each case's critical fact) for checks and debugging.
    """

    batch: dict[str, Any]
    labels: dict[str, Label]
    hidden: dict[str, Any] = field(default_factory=dict)

    @property
    def system(self) -> str:
        """The system every operation of this batch belongs to (first one found)."""
        for op in self.batch["operations"]:
            if op.get("system"):
                return str(op["system"])
        return ""


def count_labels(
    batches: Iterable[LabelledBatch], key: Callable[[LabelledBatch], str] | None = None
) -> dict[str, Counter[str]]:
    """Per system (or per ``key(batch)``), how many cases carry each error type.

    Unlabelled cases count as ``passed``.
    """
    counts: dict[str, Counter[str]] = {}
    for item in batches:
        row = counts.setdefault(key(item) if key else item.system, Counter())
        for case in item.batch["cases"]:
            label = item.labels.get(case["id"])
            row[label["error_type"] if label else PASSED] += 1
    return counts


def format_counts(counts: Mapping[str, Counter[str]], row_title: str = "system") -> str:
    """A plain-text table: one row per key, one column per error type, then passed and total."""
    columns = [*ERROR_TYPES, PASSED, "total"]
    width = max([len(row_title), *(len(key) for key in counts)]) + 2
    lines = [row_title.ljust(width) + "".join(c.rjust(16) for c in columns)]
    totals: Counter[str] = Counter()
    for key, counter in counts.items():
        row = {**counter, "total": sum(counter.values())}
        totals.update(row)
        lines.append(key.ljust(width) + "".join(str(row.get(c, 0)).rjust(16) for c in columns))
    lines.append("all".ljust(width) + "".join(str(totals.get(c, 0)).rjust(16) for c in columns))
    return "\n".join(lines)


def dump(batches: Iterable[LabelledBatch], directory: str | Path) -> None:
    """Write ``batch-NNN.json`` (what to ingest) and one ``labels.json`` (what to score against)."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    labels: dict[str, Label] = {}
    for index, item in enumerate(batches):
        (out / f"batch-{index:03d}.json").write_text(json.dumps(item.batch), encoding="utf-8")
        labels.update(item.labels)
    (out / "labels.json").write_text(json.dumps(labels, indent=1), encoding="utf-8")
