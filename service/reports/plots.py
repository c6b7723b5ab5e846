"""The plots of the HTML error report, drawn with matplotlib as SVG ``data:`` URIs.

Figures are made with ``matplotlib.figure.Figure`` directly, never through ``pyplot``: no global
figure registry, no GUI backend (the Agg backend is selected anyway for anything that asks), so
rendering is safe in a server thread. An SVG inside an ``<img>`` cannot run scripts and its ids
cannot clash with the page's, so user-supplied names drawn into a plot stay inert.
"""

from __future__ import annotations

import base64
import io
from collections import defaultdict
from datetime import date, timedelta

import matplotlib
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from service.reports.models import Report

# Figures here never need a backend, but anything in this process that asks gets the headless one.
matplotlib.use("Agg")

ERROR_COLOURS = {
    "ExtractionError": "#4c72b0",
    "UpdateError": "#dd8452",
    "DeletionError": "#c44e52",
    "RetrievalError": "#55a868",
    "ResponseError": "#8172b3",
}
OTHER_COLOUR = "#999999"
MAX_BARS = 15


def label(text: str | None, limit: int = 48) -> str:
    """A name as matplotlib should draw it: ``$`` would start math mode, long names are cut."""
    shown = "(none)" if text is None else text
    if len(shown) > limit:
        shown = shown[: limit - 1] + "…"
    return shown.replace("$", r"\$")


def _svg_uri(figure: Figure) -> str:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="svg", bbox_inches="tight", metadata={"Date": None})
    return "data:image/svg+xml;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def _empty(figure: Figure, message: str) -> str:
    ax = figure.add_subplot()
    ax.text(0.5, 0.5, message, ha="center", va="center", fontsize=12, color="#666666")
    ax.set_axis_off()
    return _svg_uri(figure)


def _centre(ax: Axes, bars: int, room: int = 4) -> None:
    """Room for at least ``room`` bars, the drawn ones in the middle: one bar is not a wall."""
    pad = max(0.0, (room - bars) / 2)
    ax.set_xlim(-0.6 - pad, bars - 0.4 + pad)


def _legend(ax: Axes) -> None:
    """A legend beside a stacked plot, listed top to bottom as the stack is drawn."""
    handles, labels = ax.get_legend_handles_labels()
    ax.legend(
        handles[::-1],
        labels[::-1],
        fontsize=8,
        frameon=False,
        loc="upper left",
        bbox_to_anchor=(1.0, 1.0),
    )


def _types(report: Report) -> list[str]:
    return [row.error_type for row in report.by_error_type]


def errors_per_system(report: Report) -> str:
    """(a) A stacked bar per system: its attributed failed cases split by error type."""
    systems = report.by_system[:MAX_BARS]
    figure = Figure(figsize=(7.5, 4.2))
    if not systems:
        return _empty(figure, "no attributed failed cases")
    ax = figure.add_subplot()
    x = list(range(len(systems)))
    bottom = [0] * len(systems)
    for error_type in _types(report):
        heights = [s.by_error_type.get(error_type, 0) for s in systems]
        if not any(heights):
            continue
        colour = ERROR_COLOURS.get(error_type, OTHER_COLOUR)
        ax.bar(x, heights, bottom=bottom, label=label(error_type), color=colour, width=0.6)
        bottom = [b + h for b, h in zip(bottom, heights, strict=True)]
    ax.set_xticks(x, [label(s.system, 24) for s in systems], rotation=20 if len(x) > 4 else 0)
    _centre(ax, len(x))
    ax.set_ylabel("attributed failed cases")
    ax.set_title("Error types per system")
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    _legend(ax)
    ax.spines[["top", "right"]].set_visible(False)
    return _svg_uri(figure)


def blamed_operations(report: Report) -> str:
    """(b) A horizontal bar per operation name and system, most often blamed on top."""
    top = report.top_operations[:MAX_BARS]
    figure = Figure(figsize=(7.5, max(2.4, 0.45 * len(top) + 1.2)))
    if not top:
        return _empty(figure, "no operation blamed yet")
    ax = figure.add_subplot()
    names = [f"{label(op.operation_name)}  [{label(op.system, 20)}]" for op in reversed(top)]
    counts = [op.count for op in reversed(top)]
    bars = ax.barh(range(len(top)), counts, color="#4c72b0", height=0.6)
    ax.bar_label(bars, padding=3, fontsize=8)
    ax.set_yticks(range(len(top)), names, fontsize=8)
    ax.set_xlabel("attributed failed cases blaming it")
    ax.set_title("Most blamed operations")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.spines[["top", "right"]].set_visible(False)
    return _svg_uri(figure)


MAX_BARS = 90
"""Most bars the trend plot draws; longer spans are binned."""


def _all_periods(first: date, last: date, bucket: str) -> list[date]:
    """Every period from ``first`` to ``last``: quiet days show as gaps, not as nothing."""
    step = timedelta(days=7 if bucket == "week" else 1)
    periods = [first]
    while periods[-1] + step <= last:
        periods.append(periods[-1] + step)
    return periods


def errors_over_time(report: Report) -> str:
    """(c) A stacked bar per period (day or week): attributed failed cases by error type.

    Bars rather than lines or areas: a project attributed on one day still shows a readable plot.
    """
    figure = Figure(figsize=(7.5, 3.8))
    if not report.trend:
        return _empty(figure, "no dated attributed failed cases")
    counts: dict[str, dict[date, int]] = defaultdict(dict)
    for row in report.trend:
        counts[row.error_type][row.period] = row.count
    known = sorted({row.period for row in report.trend})
    periods = _all_periods(known[0], known[-1], report.filters.bucket)
    # Years of days would be thousands of bars (and a multi-megabyte SVG that takes half a
    # minute to draw): past MAX_BARS, consecutive periods are summed into equal bins.
    per_bin = -(-len(periods) // MAX_BARS)
    bins = [periods[i : i + per_bin] for i in range(0, len(periods), per_bin)]
    ax = figure.add_subplot()
    x = list(range(len(bins)))
    bottom = [0] * len(bins)
    for error_type in _types(report):
        if error_type not in counts:
            continue
        heights = [sum(counts[error_type].get(p, 0) for p in group) for group in bins]
        # Only the bars with a height: an empty one draws nothing, yet each bar is a patch
        # matplotlib lays out and writes (90 bins x 5 types took most of a large report's
        # page). So the plot costs the trend's rows, not the span of days it covers.
        drawn = [i for i, h in enumerate(heights) if h]
        colour = ERROR_COLOURS.get(error_type, OTHER_COLOUR)
        ax.bar(
            [x[i] for i in drawn],
            [heights[i] for i in drawn],
            bottom=[bottom[i] for i in drawn],
            label=label(error_type),
            color=colour,
            width=0.7,
        )
        bottom = [b + h for b, h in zip(bottom, heights, strict=True)]
    periods = [group[0] for group in bins]
    every = max(1, len(periods) // 12)
    ax.set_xticks(x[::every], [p.isoformat() for p in periods[::every]])
    ax.tick_params(axis="x", labelrotation=30, labelsize=8)
    _centre(ax, len(periods))
    ax.set_ylabel("attributed failed cases")
    unit = report.filters.bucket
    ax.set_title(
        f"Error types per {unit}" if per_bin == 1 else f"Error types per {per_bin} {unit}s"
    )
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    _legend(ax)
    ax.spines[["top", "right"]].set_visible(False)
    return _svg_uri(figure)
