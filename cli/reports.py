"""HTTP calls ``memtrace report`` makes to a running service, and the report as terminal tables."""

from __future__ import annotations

import httpx
from rich.table import Table

from cli.http import checked
from service.reports import tables
from service.reports.models import Report
from service.reports.tables import ReportTable, number


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


def _cell(value: object) -> str:
    if value is None:
        return "(none)"
    return number(value) if isinstance(value, int | float) else str(value)


def _terminal(table: ReportTable) -> Table:
    """One of the report's tables (``service.reports.tables``) as a rich table."""
    shown = Table(title=table.title)
    for i, header in enumerate(table.headers):
        shown.add_column(header, justify="right" if i in table.numeric else "left")
    for row in table.rows:
        shown.add_row(*(_cell(v) for v in row))
    return shown


def report_tables(report: Report) -> list[Table]:
    """The report's numbers as rich tables, built by the same code as the HTML page's, in its
    order (the long breakdown table is left to the page and ``--json``)."""
    labels, counts = zip(*tables.totals(report), strict=True)
    totals = Table(*labels, title=f"error report of {report.project!r}")
    totals.add_row(*(number(n) for n in counts))
    shown = [tables.per_system(report), tables.by_error_type(report), tables.operations(report)]
    if report.top_prompts:
        shown.append(tables.prompts(report))
    if report.prompt_versions:
        shown.append(tables.prompt_versions(report))
    shown += [tables.over_time(report), tables.cost(report)]
    return [totals, *(_terminal(t) for t in shown)]


def report_json(report: Report) -> str:
    """The report as the service returned it (JSON text)."""
    return report.model_dump_json(indent=2)
