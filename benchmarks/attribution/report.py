"""The attribution benchmark's figures (one JSON-ready dict) and their Markdown rendering."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from benchmarks.attribution.metrics import (
    GOALS,
    MAIN_HEADERS,
    Record,
    breakdown,
    confusion,
    goal_mark,
    markdown_table,
    reliability,
    rows_of,
    summarize,
    token_ratio,
)

ROW_ORDER = ["heuristic", "llm", "llm-all", "baseline", "inproc-heuristic", "inproc-llm"]
SYNTHETIC_ALL = "synthetic (all sizes)"


def _family(record: Record) -> str:
    """``synthetic`` for every synthetic size, else the dataset's name."""
    return "synthetic" if record["dataset"].startswith("synthetic") else str(record["dataset"])


def _order(row: str) -> int:
    return ROW_ORDER.index(row) if row in ROW_ORDER else len(ROW_ORDER)


def figures(
    records: list[Record], walls: dict[tuple[str, str], float], sizes: dict[str, Any]
) -> dict[str, Any]:
    """Everything the report shows, from the per-case records and the wall time per
    (dataset, row)."""
    by: dict[tuple[str, str], list[Record]] = defaultdict(list)
    for r in records:
        by[(r["dataset"], r["judge"])].append(r)
        if r["dataset"].startswith("synthetic"):
            by[(SYNTHETIC_ALL, r["judge"])].append(r)
        if r.get("half"):  # LoCoMo: the tuning half and the held-out half, each on its own
            by[(f"{r['dataset']} ({r['half']})", r["judge"])].append(r)
    syn_walls: dict[str, float] = defaultdict(float)
    for (dataset, row), seconds in walls.items():
        if dataset.startswith("synthetic"):
            syn_walls[row] += seconds
    summary: dict[str, dict[str, Any]] = defaultdict(dict)
    by_system: dict[str, dict[str, Any]] = defaultdict(dict)
    by_type: dict[str, dict[str, Any]] = defaultdict(dict)
    by_category: dict[str, dict[str, Any]] = defaultdict(dict)
    ratios: dict[str, dict[str, Any]] = defaultdict(dict)
    for (dataset, row), rs in sorted(by.items(), key=lambda kv: (kv[0][0], _order(kv[0][1]))):
        wall: float | None = (
            syn_walls.get(row) if dataset == SYNTHETIC_ALL else walls.get((dataset, row))
        )
        summary[dataset][row] = summarize(rs, wall)
        by_system[dataset][row] = breakdown(rs, "system")
        by_type[dataset][row] = breakdown(rs, "label_type")
        if any(r.get("category") for r in rs):
            by_category[dataset][row] = breakdown(rs, "category")
        if row != "baseline" and (base := by.get((dataset, "baseline"))):
            ratio = token_ratio(rs, base)
            if ratio and any(r.get("input_tokens") for r in rs):
                ratios[dataset][row] = ratio
    rows = sorted({r["judge"] for r in records}, key=_order)
    reliable = {
        row: reliability([r for r in records if r["judge"] == row])
        for row in rows
        if row != "baseline"
    }
    out: dict[str, Any] = {
        "reliability": reliable,
        "datasets": sizes,
        "summary": summary,
        "by_system": by_system,
        "by_error_type": by_type,
        "by_category": by_category,
        "token_ratio_vs_baseline": ratios,
        "confusion": {
            row: {
                family: confusion(
                    [r for r in records if r["judge"] == row and _family(r) == family]
                )
                for family in sorted({_family(r) for r in records})
            }
            for row in rows
            if row != "baseline"
        },
    }
    out["goals"] = goals(out)
    return out


def _cases_per_s(summary: dict[str, Any], row: str) -> float | None:
    cases = walls = 0.0
    for dataset, rows in summary.items():
        if dataset != SYNTHETIC_ALL and row in rows and rows[row].get("wall_seconds"):
            cases += rows[row]["cases"]
            walls += rows[row]["wall_seconds"]
    return round(cases / walls, 2) if walls else None


def goals(fig: dict[str, Any]) -> list[dict[str, Any]]:
    """Each goal with the measured value and whether it was met."""
    s = fig["summary"]

    def get(dataset: str, row: str, *path: str) -> float | None:
        value: Any = s.get(dataset, {}).get(row)
        for p in path:
            value = value.get(p) if isinstance(value, dict) else None
        return float(value) if value is not None else None

    locomo = "locomo (heldout)" if "locomo (heldout)" in s else "locomo"
    out = [
        (
            "heuristic op accuracy, synthetic",
            get(SYNTHETIC_ALL, "heuristic", "op_accuracy"),
            GOALS["heuristic_op_accuracy_synthetic"],
            True,
        ),
        (
            f"heuristic op accuracy, {locomo}",
            get(locomo, "heuristic", "op_accuracy"),
            GOALS["heuristic_op_accuracy_locomo"],
            True,
        ),
        *(
            (
                f"oracle (llm-all) op accuracy, {dataset}",
                get(dataset, "llm-all", "op_accuracy"),
                GOALS["oracle_op_accuracy"],
                True,
            )
            for dataset in s
            if "llm-all" in s[dataset]
        ),
        *(
            (
                f"{row}: cases at confidence >= 0.8 naming the right operation",
                buckets[-1]["op_accuracy"],
                GOALS["reliability_at_0_8"],
                True,
            )
            for row, buckets in fig.get("reliability", {}).items()
            if not row.startswith("inproc")
        ),
        (
            "heuristic cases/s (HTTP, all datasets)",
            _cases_per_s(s, "heuristic"),
            GOALS["heuristic_cases_per_s"],
            True,
        ),
        (
            "heuristic cases/s (engine in-process, one at a time)",
            _cases_per_s(s, "inproc-heuristic"),
            GOALS["heuristic_cases_per_s"],
            True,
        ),
    ]
    for row in ("llm", "llm-all"):
        for dataset in s:
            if row not in s[dataset] or dataset == SYNTHETIC_ALL:
                continue
            out.append(
                (
                    f"{row} mean LLM calls/case, {dataset}",
                    get(dataset, row, "llm_calls", "mean"),
                    GOALS["llm_calls_per_case"],
                    False,
                )
            )
            ratio = fig["token_ratio_vs_baseline"].get(dataset, {}).get(row)
            out.append(
                (
                    f"{row} input tokens/case vs baseline, {dataset}",
                    ratio["ratio_of_means"] if ratio else None,
                    GOALS["llm_input_tokens_vs_baseline"],
                    False,
                )
            )
    return [
        {"goal": name, "value": value, "target": target, "verdict": goal_mark(value, target, hi)}
        for name, value, target, hi in out
    ]


def markdown(fig: dict[str, Any], detail_row: str = "heuristic") -> str:
    """The report: datasets, the main table, goals, ratios, breakdowns, confusions, oracle."""
    parts = ["# Attribution benchmark", ""]
    if fig.get("command"):
        parts += [f"Command: `{fig['command'].strip()}`", ""]
    if fig.get("code"):
        parts += [f"Code: {fig['code']}", ""]
    parts += ["## Datasets", "", _datasets_table(fig["datasets"]), ""]
    parts += ["## Results", "", markdown_table(MAIN_HEADERS, rows_of(fig["summary"], _order)), ""]
    parts += [
        "Accuracies count every labelled failed case (inconclusive with no operation = wrong). "
        "s/case: the engine's own `cost.seconds` (HTTP rows) or the call's wall time "
        "(baseline, in-process); latency: the client's wall time per request. cases/s: over "
        "the attribution phase, with the configured concurrency for HTTP and the baseline, "
        "one at a time in-process.",
        "",
        "## Goals",
        "",
    ]
    parts += [f"- {g['goal']}: {_fmt(g['value'])} {g['verdict']}" for g in fig["goals"]]
    parts += ["", "## Reliability: accuracy per confidence bucket", ""]
    parts += [
        markdown_table(
            ["judge", "confidence", "cases", "op accuracy", "of them inconclusive"],
            [
                [row, b["bucket"], b["cases"], b["op_accuracy"], b["inconclusive"]]
                for row, buckets in fig.get("reliability", {}).items()
                for b in buckets
            ],
        )
    ]
    parts += ["", "## LLM judge input tokens per case vs the flat-log baseline", ""]
    ratio_rows = [
        [d, row, r["ratio_of_means"], r["median_ratio"], r["max_ratio"]]
        for d, rows in fig["token_ratio_vs_baseline"].items()
        for row, r in rows.items()
    ]
    parts += [
        markdown_table(
            ["dataset", "judge", "ratio of means", "median ratio", "max ratio"], ratio_rows
        ),
        "",
    ]
    for title, key in (
        ("system", "by_system"),
        ("error type", "by_error_type"),
        ("LoCoMo question category", "by_category"),
    ):
        parts += [f"## Accuracy per {title}", ""]
        rows = [
            [d, row, k, v["cases"], v["type_accuracy"], v["op_accuracy"]]
            for d, by_row in fig[key].items()
            for row, groups in sorted(by_row.items(), key=lambda kv: _order(kv[0]))
            for k, v in groups.items()
            if row in (detail_row, "llm")
        ]
        parts += [
            markdown_table(["dataset", "judge", title, "cases", "type acc", "op acc"], rows),
            "",
        ]
    for family, pairs in fig["confusion"].get(detail_row, {}).items():
        parts += [f"## Most common misattributions ({detail_row}, {family})", ""]
        for c in pairs[:6]:
            parts.append(f"### {c['label']} -> {c['predicted']}: {c['count']} ({c['systems']})")
            parts.append("")
            parts += _examples(c)
            parts.append("")
    for key in ("oracle", "in_process_agreement", "notes"):
        if fig.get(key):
            parts += [f"## {key.replace('_', ' ').capitalize()}", "", f"```\n{fig[key]}\n```", ""]
    return "\n".join(parts)


def _examples(pair: dict[str, Any]) -> list[str]:
    return [
        f"- `{e['case_id']}` ({e['dataset']}, {e['system']}): label {e['label_type']} "
        f"`{e['label_op']}`; predicted {e['predicted_type']} `{e['predicted_op']}` "
        f"({e['status']}): {e['reason']}"
        for e in pair["examples"][:3]
    ]


def _fmt(value: Any) -> str:
    return "n/a" if value is None else f"{value:.3f}" if isinstance(value, float) else str(value)


def _datasets_table(sizes: dict[str, Any]) -> str:
    rows = [
        [
            name,
            s["batches"],
            f"{s['operations']['min']}-{s['operations']['max']} (mean {s['operations']['mean']})",
            f"{s['units']['min']}-{s['units']['max']} (mean {s['units']['mean']})",
            s["cases"],
        ]
        for name, s in sizes.items()
    ]
    return markdown_table(
        ["dataset", "batches", "operations per batch", "units per batch", "failed cases"], rows
    )
