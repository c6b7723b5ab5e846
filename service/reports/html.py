"""The error report as one self-contained HTML page: inline CSS, plots as embedded SVG images.

Names, systems and prompts are user data: every value reaches the page through ``_e``
(``html.escape``), and the plots are ``<img>`` data URIs, so nothing from the graph can become
markup or script. The page needs no network and no JavaScript.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from collections.abc import Set as AbstractSet
from html import escape

from service.reports import tables
from service.reports.models import Report
from service.reports.plots import blamed_operations, errors_over_time, errors_per_system
from service.reports.tables import ReportTable, number

MAX_TABLE_ROWS = 200

_CSS = """
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: #222;
       margin: 2rem auto; max-width: 1100px; padding: 0 1rem; }
h1 { font-size: 1.6rem; margin-bottom: .2rem; }
h2 { font-size: 1.2rem; margin-top: 2.2rem; border-bottom: 1px solid #ddd; padding-bottom: .2rem; }
.meta { color: #666; margin-top: 0; }
.cards { display: flex; flex-wrap: wrap; gap: .6rem; margin: 1rem 0; }
.card { border: 1px solid #ddd; border-radius: 6px; padding: .5rem .9rem; min-width: 8rem; }
.card .n { font-size: 1.5rem; font-weight: 600; }
.card .k { color: #666; font-size: .85rem; }
table { border-collapse: collapse; margin: .6rem 0; }
th, td { border-bottom: 1px solid #e5e5e5; padding: .25rem .7rem; text-align: left; }
th { background: #f6f6f6; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
img.plot { display: block; max-width: 100%; margin: .8rem 0; }
.note { color: #666; font-size: .9rem; }
code { background: #f3f3f3; padding: 0 .25rem; border-radius: 3px; }
"""


def _e(value: object) -> str:
    """Any value as escaped HTML text; None shows as an em dash."""
    return "—" if value is None else escape(str(value), quote=True)


def _table(
    headers: Sequence[str], rows: Iterable[Sequence[object]], numeric: AbstractSet[int]
) -> str:
    """A table; columns in ``numeric`` are right-aligned and formatted as numbers."""
    head = "".join(
        f'<th class="num">{_e(h)}</th>' if i in numeric else f"<th>{_e(h)}</th>"
        for i, h in enumerate(headers)
    )
    body = []
    for row in rows:
        cells = "".join(
            f'<td class="num">{_e(number(v) if isinstance(v, int | float) else v)}</td>'
            if i in numeric
            else f"<td>{_e(v)}</td>"
            for i, v in enumerate(row)
        )
        body.append(f"<tr>{cells}</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _rendered(table: ReportTable, limit: int = MAX_TABLE_ROWS) -> str:
    """The table cut at ``limit`` rows, with a note saying how many more the JSON report has."""
    html = _table(table.headers, table.rows[:limit], table.numeric)
    if len(table.rows) <= limit:
        return html
    more = len(table.rows) - limit
    return html + f'<p class="note">{_e(more)} more {_e(table.what)} in the JSON report.</p>'


def _plot(uri: str, alt: str) -> str:
    return f'<img class="plot" alt="{_e(alt)}" src="{_e(uri)}">'


def _header(report: Report) -> str:
    f = report.filters
    window = [
        f"system <code>{_e(f.system)}</code>" if f.system is not None else "every system",
        f"since {_e(f.since.isoformat())}" if f.since else "",
        f"until {_e(f.until.isoformat())}" if f.until else "",
    ]
    return (
        f"<h1>MemTrace error report: {_e(report.project)}</h1>"
        f'<p class="meta">{", ".join(w for w in window if w)}; generated '
        f"{_e(report.generated_at.strftime('%Y-%m-%d %H:%M:%S UTC'))}</p>"
    )


def _cards(report: Report) -> str:
    cards = "".join(
        f'<div class="card"><div class="n">{_e(number(n))}</div><div class="k">{_e(k)}</div></div>'
        for k, n in tables.totals(report)
    )
    return f'<h2>Totals</h2><div class="cards">{cards}</div>'


def _per_system(report: Report) -> str:
    return (
        "<h2>Error types per system</h2>"
        + _plot(errors_per_system(report), "stacked bars: error types per system")
        + _rendered(tables.per_system(report))
        + _rendered(tables.by_error_type(report))
    )


def _operations(report: Report) -> str:
    return (
        "<h2>Most blamed operations</h2>"
        + _plot(blamed_operations(report), "horizontal bars: the most blamed operations")
        + _rendered(tables.operations(report))
    )


def _prompts(report: Report) -> str:
    if not report.top_prompts:
        return (
            '<h2>Most blamed prompts</h2><p class="note">No blamed operation carries a '
            "<code>prompt</code> attribute.</p>"
        )
    return "<h2>Most blamed prompts</h2>" + _rendered(tables.prompts(report))


def _prompt_versions(report: Report) -> str:
    if not report.prompt_versions:
        return ""
    return (
        "<h2>Prompt versions</h2>"
        '<p class="note">Failures blamed on operations that ran with each version (whole '
        "project); consecutive versions of a prompt read as before and after.</p>"
        + _rendered(tables.prompt_versions(report))
    )


def _over_time(report: Report) -> str:
    return (
        f"<h2>Error types per {_e(report.filters.bucket)}</h2>"
        + _plot(errors_over_time(report), "lines: error types over time")
        + _rendered(tables.over_time(report))
    )


def _breakdown(report: Report) -> str:
    return "<h2>Attributed failed cases by system, error type and operation</h2>" + _rendered(
        tables.breakdown(report)
    )


def _cost(report: Report) -> str:
    return (
        "<h2>Attribution cost</h2>"
        + f'<p class="note">Over the {_e(number(report.cost.attributions))} stored '
        "attribution(s) in scope.</p>" + _rendered(tables.cost(report))
    )


_RULES = (
    '<p class="note">A case belongs to the system of the operation that produced its answer '
    "(else to the blamed operation's). Its time is its answer's timestamp (else the "
    "attribution's); periods are UTC days or weeks from Monday. Counts are of stored "
    "attributions with status <code>attributed</code>.</p>"
)


def render_report(report: Report) -> str:
    """The whole page for ``report``."""
    sections = [
        _header(report),
        _cards(report),
        _per_system(report),
        _operations(report),
        _prompts(report),
        _prompt_versions(report),
        _over_time(report),
        _breakdown(report),
        _cost(report),
        _RULES,
    ]
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>MemTrace error report: {_e(report.project)}</title>"
        f"<style>{_CSS}</style></head><body>\n" + "\n".join(sections) + "\n</body></html>\n"
    )
