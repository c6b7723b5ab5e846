"""HTTP calls ``memtrace report`` makes to a running service, and the report as terminal tables."""

from __future__ import annotations

import httpx
from rich.table import Table

from cli.http import checked
from graph_schema.reports import Report


def fetch_report(
    client: httpx.Client,
    project: str,
    system: str | None = None,
    since: str | None = None,
    until: str | None = None,
    bucket: str = "day",
) -> Report:
    """``GET /report`` of ``project``; filters left None are not sent."""
    filters = {"system": system, "since": since, "until": until, "bucket": bucket}
    params = {"project": project, **{k: v for k, v in filters.items() if v is not None}}
    return Report.model_validate(checked(client.get("/report", params=params)))


def _name(value: str | None) -> str:
    return "(none)" if value is None else value


def _pct(share: float) -> str:
    return f"{share * 100:.1f}%"


def report_tables(report: Report) -> list[Table]:
    """The report's numbers as rich tables, in the order of the HTML page."""
    t = report.totals
    totals = Table(
        "cases",
        "failed",
        "attributed",
        "inconclusive",
        "unanswerable",
        "not failed",
        "failed, not attributed",
        title=f"error report of {report.project!r}",
    )
    totals.add_row(
        *(
            str(n)
            for n in (
                t.cases,
                t.failed,
                t.attributed,
                t.inconclusive,
                t.unanswerable,
                t.not_failed,
                t.failed_unattributed,
            )
        )
    )
    types = [row.error_type for row in report.by_error_type]
    per_system = Table("system", *types, "total", title="error types per system")
    for s in report.by_system:
        per_system.add_row(
            _name(s.system), *(str(s.by_error_type.get(k, 0)) for k in types), str(s.count)
        )
    by_type = Table("error type", "cases", "share", title="error types")
    for row in report.by_error_type:
        by_type.add_row(row.error_type, str(row.count), _pct(row.share))
    operations = Table("operation", "system", "blamed", "share", title="most blamed operations")
    for op in report.top_operations:
        operations.add_row(
            _name(op.operation_name), _name(op.system), str(op.count), _pct(op.share)
        )
    tables = [totals, per_system, by_type, operations]
    if report.top_prompts:
        prompts = Table("prompt", "operations", "blamed", "share", title="most blamed prompts")
        for p in report.top_prompts:
            prompts.add_row(p.prompt, ", ".join(p.operation_names), str(p.count), _pct(p.share))
        tables.append(prompts)
    if report.prompt_versions:
        versions = Table(
            "version", "operations", "failures", "failure rate", title="prompt versions"
        )
        for v in report.prompt_versions:
            rate = "-" if v.failure_rate is None else _pct(v.failure_rate)
            versions.add_row(v.label, str(v.operations), str(v.failures), rate)
        tables.append(versions)
    trend = Table(report.filters.bucket, "error type", "cases", title="error types over time")
    for point in report.trend:
        trend.add_row(point.period.isoformat(), point.error_type, str(point.count))
    c = report.cost
    cost = Table("", "total", "mean", title=f"attribution cost ({c.attributions} attributions)")
    for label, total, mean in (
        ("LLM calls", c.llm_calls, c.mean_llm_calls),
        ("input tokens", c.input_tokens, c.mean_input_tokens),
        ("output tokens", c.output_tokens, c.mean_output_tokens),
        ("seconds", c.seconds, c.mean_seconds),
    ):
        cost.add_row(label, f"{total:g}", f"{mean:.2f}")
    return [*tables, trend, cost]


def report_json(report: Report) -> str:
    """The report as the service returned it (JSON text)."""
    return report.model_dump_json(indent=2)
