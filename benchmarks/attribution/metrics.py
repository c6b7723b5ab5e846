"""Metrics of the attribution benchmark, computed from per-case records, and their tables.

A record is one case under one judge row (see :func:`.run.attribute_all`): the
label (``label_type``, ``label_op``), the prediction (``status``, ``error_type``, ``op_id``) and
the cost. Accuracies count every case: an inconclusive answer with no operation is simply wrong.
"""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from typing import Any

from benchmarks.datasets import ERROR_TYPES

Record = dict[str, Any]
STATUSES = ("attributed", "inconclusive", "unanswerable", "not_failed", "error")

GOALS = {
    "heuristic_op_accuracy_synthetic": 0.90,
    "heuristic_op_accuracy_locomo": 0.80,
    "oracle_op_accuracy": 0.97,
    "reliability_at_0_8": 0.90,
    "heuristic_cases_per_s": 50.0,
    "llm_calls_per_case": 6.0,
    "llm_input_tokens_vs_baseline": 0.20,
}


def _mean(values: list[float]) -> float:
    return round(statistics.mean(values), 4) if values else 0.0


def _median(values: list[float]) -> float:
    return round(statistics.median(values), 4) if values else 0.0


def type_correct(r: Record) -> bool:
    return r.get("error_type") is not None and r["error_type"] == r["label_type"]


def op_correct(r: Record) -> bool:
    return r.get("op_id") is not None and r["op_id"] == r["label_op"]


def accuracy(records: list[Record]) -> dict[str, float]:
    n = len(records) or 1
    return {
        "type_accuracy": round(sum(map(type_correct, records)) / n, 4),
        "op_accuracy": round(sum(map(op_correct, records)) / n, 4),
        "joint_accuracy": round(sum(type_correct(r) and op_correct(r) for r in records) / n, 4),
    }


def summarize(records: list[Record], wall_s: float | None = None) -> dict[str, Any]:
    """Accuracy, status counts and cost per case of one group of records."""
    statuses = Counter(r["status"] for r in records)
    out: dict[str, Any] = {"cases": len(records), **accuracy(records)}
    out["status"] = {s: statuses.get(s, 0) for s in STATUSES if statuses.get(s)}
    for name in ("llm_calls", "input_tokens", "output_tokens", "seconds", "latency"):
        values = [float(r.get(name) or 0) for r in records]
        out[name] = {"mean": _mean(values), "median": _median(values), "max": max(values or [0])}
    if wall_s:
        out["wall_seconds"] = round(wall_s, 3)
        out["cases_per_s"] = round(len(records) / wall_s, 2)
    return out


def breakdown(records: list[Record], key: str) -> dict[str, dict[str, Any]]:
    """Accuracies per value of ``key`` (e.g. ``system``, ``label_type``)."""
    groups: dict[str, list[Record]] = defaultdict(list)
    for r in records:
        groups[str(r[key])].append(r)
    return {k: {"cases": len(v), **accuracy(v)} for k, v in sorted(groups.items())}


def predicted(r: Record) -> str:
    """What was predicted, as a confusion-matrix column: the error type, else the status."""
    return str(r["error_type"]) if r.get("error_type") else str(r["status"])


def confusion(records: list[Record]) -> list[dict[str, Any]]:
    """Misattributions grouped by (label, prediction), most common first; a right type with the
    wrong operation is its own group (``label -> label (wrong op)``)."""
    groups: dict[tuple[str, str], list[Record]] = defaultdict(list)
    for r in records:
        if type_correct(r) and op_correct(r):
            continue
        guess = predicted(r) + (" (wrong op)" if type_correct(r) else "")
        groups[(r["label_type"], guess)].append(r)
    ordered = sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    return [
        {
            "label": label,
            "predicted": guess,
            "count": len(rs),
            "systems": dict(Counter(r["system"] for r in rs)),
            "examples": [_example(r) for r in rs[:5]],
        }
        for (label, guess), rs in ordered
    ]


def _example(r: Record) -> dict[str, Any]:
    keys = ("dataset", "project", "case_id", "system", "label_type", "label_op", "status")
    return {
        **{k: r.get(k) for k in keys},
        "predicted_type": r.get("error_type"),
        "predicted_op": r.get("op_id"),
        "predicted_op_kind": r.get("op_kind"),
        "reason": r.get("reason"),
        "evidence_path": r.get("evidence_path"),
    }


def token_ratio(judge: list[Record], baseline: list[Record]) -> dict[str, float] | None:
    """The judge's input tokens per case relative to the baseline's, over the cases both ran."""
    base = {(r["project"], r["case_id"]): r for r in baseline}
    pairs = [
        (float(r.get("input_tokens") or 0), float(base[k]["input_tokens"]))
        for r in judge
        if (k := (r["project"], r["case_id"])) in base and base[k].get("input_tokens")
    ]
    if not pairs:
        return None
    return {
        "ratio_of_means": round(
            statistics.mean(a for a, _ in pairs) / statistics.mean(b for _, b in pairs), 4
        ),
        "median_ratio": round(statistics.median(a / b for a, b in pairs), 4),
        "max_ratio": round(max(a / b for a, b in pairs), 4),
    }


def group(records: Iterable[Record], *keys: str) -> dict[tuple[str, ...], list[Record]]:
    out: dict[tuple[str, ...], list[Record]] = defaultdict(list)
    for r in records:
        out[tuple(str(r[k]) for k in keys)].append(r)
    return dict(out)


def markdown_table(headers: list[str], rows: list[list[Any]]) -> str:
    def cell(v: Any) -> str:
        if isinstance(v, float):
            return f"{v:.3f}" if abs(v) < 100 else f"{v:,.0f}"
        return str(v)

    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def goal_mark(value: float | None, goal: float, higher_is_better: bool = True) -> str:
    if value is None:
        return "n/a"
    ok = value >= goal if higher_is_better else value <= goal
    return f"{'met' if ok else 'MISSED'} (goal {'>=' if higher_is_better else '<='} {goal:g})"


def rows_of(
    summaries: dict[str, dict[str, dict[str, Any]]], order: Callable[[str], int] | None = None
) -> list[list[Any]]:
    """The main table's rows: one per dataset and judge row."""
    rows = []
    for dataset, by_row in summaries.items():
        for row, s in sorted(by_row.items(), key=lambda kv: order(kv[0]) if order else 0):
            status = s.get("status", {})
            rows.append(
                [
                    dataset,
                    row,
                    s["cases"],
                    "/".join(
                        str(status.get(k, 0))
                        for k in ("attributed", "inconclusive", "unanswerable", "error")
                    ),
                    s["type_accuracy"],
                    s["op_accuracy"],
                    f"{s['llm_calls']['mean']:.2f} / {s['llm_calls']['median']:g}",
                    f"{s['input_tokens']['mean']:,.0f} / {s['input_tokens']['median']:,.0f}",
                    f"{s['output_tokens']['mean']:,.0f}",
                    f"{s['seconds']['mean']:.4f} / {s['seconds']['median']:.4f}",
                    f"{s['latency']['mean']:.4f}",
                    s.get("cases_per_s", ""),
                ]
            )
    return rows


MAIN_HEADERS = [
    "dataset",
    "judge",
    "cases",
    "attr/incon/unans/err",
    "type acc",
    "op acc",
    "LLM calls mean/med",
    "input tok mean/med",
    "output tok mean",
    "s/case mean/med",
    "latency mean",
    "cases/s",
]


CONFIDENCE_BUCKETS = ((0.0, 0.4), (0.4, 0.6), (0.6, 0.8), (0.8, 1.01))


def reliability(records: list[Record]) -> list[dict[str, Any]]:
    """Per confidence bucket: how many cases, and how many of them named the right operation.
    A confidence that means something has accuracy rising with the bucket."""
    out = []
    for lo, hi in CONFIDENCE_BUCKETS:
        rs = [r for r in records if lo <= float(r.get("confidence") or 0.0) < hi]
        out.append(
            {
                "bucket": f"[{lo:.1f}, {min(hi, 1.0):.1f}{']' if hi > 1 else ')'}",
                "cases": len(rs),
                "op_accuracy": round(sum(map(op_correct, rs)) / len(rs), 4) if rs else None,
                "inconclusive": sum(r["status"] == "inconclusive" for r in rs),
            }
        )
    return out


def attributed_quality(records: list[Record]) -> dict[str, float | None]:
    """Of the results with status ``attributed``: how often their operation is right
    (precision), and what share of the failed cases came out attributed at all (coverage)."""
    attributed = [r for r in records if r["status"] == "attributed"]
    return {
        "precision": round(sum(map(op_correct, attributed)) / len(attributed), 4)
        if attributed
        else None,
        "coverage": round(len(attributed) / len(records), 4) if records else None,
    }


def confusion_matrix(records: list[Record]) -> list[str]:
    """Labelled error type (rows) by predicted type or status (columns), as text lines; a
    diagonal cell counts a right type whatever the operation (``op`` says how many of it
    also named the right operation)."""
    columns = [*ERROR_TYPES, *(s for s in STATUSES if s != "attributed")]
    seen = Counter((r["label_type"], predicted(r)) for r in records)
    columns = [c for c in columns if c in ERROR_TYPES or any(k[1] == c for k in seen)]
    short = {c: c.replace("Error", "") for c in columns}
    lines = [" " * 18 + "".join(short[c][:12].rjust(13) for c in columns) + "       op"]
    for label in ERROR_TYPES:
        rs = [r for r in records if r["label_type"] == label]
        if not rs:
            continue
        cells = "".join(str(seen.get((label, c), 0)).rjust(13) for c in columns)
        lines.append(f"{label:18}{cells}{sum(map(op_correct, rs)):6}/{len(rs)}")
    return lines
