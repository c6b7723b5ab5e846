"""The error report's tables, built once from a ``Report`` for both of its renderings: the HTML
page (``service.reports.html``) and the terminal (``cli/reports.py``).

Cells keep their values (numbers stay numbers, a missing name stays None); each renderer writes
them its own way, with ``number`` and ``share`` so that both print the same figures.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date

from service.reports.models import Report


@dataclass(frozen=True)
class ReportTable:
    title: str
    headers: list[str]
    rows: Sequence[Sequence[object]]
    numeric: frozenset[int]  # columns holding numbers (right-aligned)
    what: str  # what one row is ("systems"), for "N more systems in the JSON report"


def number(value: float | int) -> str:
    """1,234 for counts; 2.50 or 0.123 for fractional figures."""
    if isinstance(value, float) and not value.is_integer():
        return f"{value:,.2f}" if abs(value) >= 1 else f"{value:.3g}"
    return f"{int(value):,}"


def share(fraction: float) -> str:
    return f"{fraction * 100:.1f}%"


def totals(report: Report) -> list[tuple[str, int]]:
    """The report's totals as (label, count), in the order both renderings show them."""
    t = report.totals
    return [
        ("cases", t.cases),
        ("failed", t.failed),
        ("attributed", t.attributed),
        ("inconclusive", t.inconclusive),
        ("unanswerable", t.unanswerable),
        ("not failed", t.not_failed),
        ("failed, not yet attributed", t.failed_unattributed),
    ]


def _types(report: Report) -> list[str]:
    return [row.error_type for row in report.by_error_type]


def per_system(report: Report) -> ReportTable:
    types = _types(report)
    rows: list[Sequence[object]] = [
        [s.system if s.system is not None else "(none)"]
        + [s.by_error_type.get(t, 0) for t in types]
        + [s.count]
        for s in report.by_system
    ]
    numeric = frozenset(range(1, len(types) + 2))
    return ReportTable(
        "error types per system", ["system", *types, "total"], rows, numeric, "systems"
    )


def by_error_type(report: Report) -> ReportTable:
    rows: list[Sequence[object]] = [
        [row.error_type, row.count, share(row.share)] for row in report.by_error_type
    ]
    headers = ["error type", "attributed failed cases", "share"]
    return ReportTable("error types", headers, rows, frozenset({1, 2}), "error types")


def operations(report: Report) -> ReportTable:
    rows: list[Sequence[object]] = [
        [op.operation_name, op.system, op.count, share(op.share), op.operations]
        for op in report.top_operations
    ]
    headers = ["operation", "system", "blamed", "share", "distinct operations"]
    return ReportTable("most blamed operations", headers, rows, frozenset({2, 3, 4}), "operations")


def prompts(report: Report) -> ReportTable:
    rows: list[Sequence[object]] = [
        [p.prompt, ", ".join(p.operation_names), p.count, share(p.share)]
        for p in report.top_prompts
    ]
    headers = ["prompt", "operations", "blamed", "share"]
    return ReportTable("most blamed prompts", headers, rows, frozenset({2, 3}), "prompts")


def prompt_versions(report: Report) -> ReportTable:
    """Failures blamed on operations that ran with each prompt version (whole project)."""
    rows: list[Sequence[object]] = [
        [
            v.label,
            v.operations,
            v.failures,
            "-" if v.failure_rate is None else share(v.failure_rate),
            ", ".join(f"{t} {n}" for t, n in v.failures_by_error_type.items()) or "-",
        ]
        for v in report.prompt_versions
    ]
    headers = ["version", "operations", "failures", "failure rate", "by error type"]
    return ReportTable("prompt versions", headers, rows, frozenset({1, 2, 3}), "prompt versions")


def over_time(report: Report) -> ReportTable:
    """Error types per period (one row per period with any), oldest first."""
    types = _types(report)
    per: dict[date, Counter[str]] = defaultdict(Counter)
    for row in report.trend:
        per[row.period][row.error_type] += row.count
    rows: list[Sequence[object]] = [
        [period.isoformat()] + [per[period][t] for t in types] + [per[period].total()]
        for period in sorted(per)
    ]
    bucket = report.filters.bucket
    numeric = frozenset(range(1, len(types) + 2))
    return ReportTable(
        f"error types per {bucket}", [bucket, *types, "total"], rows, numeric, "periods"
    )


def breakdown(report: Report) -> ReportTable:
    rows: list[Sequence[object]] = [
        [r.system if r.system is not None else "(none)", r.error_type, r.operation_name, r.count]
        for r in report.rows
    ]
    headers = ["system", "error type", "blamed operation", "cases"]
    title = "attributed failed cases by system, error type and operation"
    return ReportTable(title, headers, rows, frozenset({3}), "rows")


def cost(report: Report) -> ReportTable:
    c = report.cost
    rows: list[Sequence[object]] = [
        ["LLM calls", c.llm_calls, c.mean_llm_calls],
        ["input tokens", c.input_tokens, c.mean_input_tokens],
        ["output tokens", c.output_tokens, c.mean_output_tokens],
        ["seconds", c.seconds, c.mean_seconds],
    ]
    title = f"attribution cost ({c.attributions} attributions)"
    if c.llm_judged:
        title += f"; {c.on_llm} of {c.llm_judged} llm-judged rest on LLM verdicts"
    headers = ["", "total", "mean per attribution"]
    return ReportTable(title, headers, rows, frozenset({1, 2}), "rows")
