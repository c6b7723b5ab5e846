"""Error-distribution reports: counting a project's stored attributions, as JSON or as HTML.

The repository hands over one row per case; everything here is counting those rows, so every
number of a report can be re-derived from ``GET /attributions`` and ``GET /cases``. Its reads
share one time budget (``MEMTRACE_AUDIT_TIMEOUT_S``), as an audit page's do.
"""

from __future__ import annotations

import asyncio
from collections import Counter, defaultdict
from collections.abc import Iterable
from datetime import UTC, date, datetime, time, timedelta
from typing import get_args

from neo4j import AsyncSession

from service.attribution.models import ErrorType
from service.errors import InvalidInput, ReadTimedOut
from service.prompts.service import version_rates
from service.read_budget import Deadline
from service.reports import repository as reports
from service.reports.counts import repository as counts
from service.reports.counts.repository import CountRow
from service.reports.models import (
    BlamedOperationCount,
    BlamedPromptCount,
    Bucket,
    CostTotals,
    Counted,
    ErrorBreakdownRow,
    ErrorTypeCount,
    PromptVersionRate,
    Report,
    ReportFilters,
    ReportTotals,
    SystemCount,
    TrendRow,
)
from service.times import in_utc

ERROR_TYPES: tuple[str, ...] = get_args(ErrorType)
"""The taxonomy, in the order of the paper (construction first, response last)."""


def check_filters(filters: ReportFilters) -> ReportFilters:
    """The filters in UTC; ``InvalidInput`` when the window is empty by construction."""
    since, until = in_utc(filters.since, "since"), in_utc(filters.until, "until")
    if since is not None and until is not None and since >= until:
        raise InvalidInput(
            "since must be before until (since is inclusive, until exclusive)",
            details=[{"loc": ["query", "since"], "msg": "not before until"}],
        )
    return filters.model_copy(update={"since": since, "until": until})


def period_start(moment: datetime, bucket: Bucket) -> date:
    """The UTC day of ``moment``, or the Monday of its week."""
    return day_period(moment.astimezone(UTC).date(), bucket)


def day_period(day: date, bucket: Bucket) -> date:
    """``day``, or the Monday of its week."""
    return day - timedelta(days=day.weekday()) if bucket == "week" else day


def _midnight(moment: datetime | None) -> bool:
    return moment is None or moment.astimezone(UTC).time() == time(0)


def kept_counts_answer(filters: ReportFilters) -> bool:
    """Whether the kept counts can answer a report with ``filters`` (in UTC): they count by UTC
    day, so a window must start and end at UTC midnight; ``recount`` asks for case by case."""
    return not filters.recount and _midnight(filters.since) and _midnight(filters.until)


def _share(count: int, whole: int) -> float:
    return round(count / whole, 4) if whole else 0.0


def _totals(rows: list[CountRow]) -> ReportTotals:
    status: Counter[str] = Counter()
    for r in rows:
        if r.status:
            status[r.status] += r.cases
    return ReportTotals(
        cases=sum(r.cases for r in rows),
        failed=sum(r.cases for r in rows if r.verdict == "failed"),
        attributions=sum(status.values()),
        attributed=status["attributed"],
        inconclusive=status["inconclusive"],
        not_failed=status["not_failed"],
        unanswerable=status["unanswerable"],
        failed_unattributed=sum(
            r.cases for r in rows if r.verdict == "failed" and r.status is None
        ),
    )


def _breakdown(attributed: list[CountRow]) -> list[ErrorBreakdownRow]:
    counts: Counter[tuple[str | None, str, str | None]] = Counter()
    for r in attributed:
        counts[(r.system, r.error_type or "", r.operation_name)] += r.cases
    ordered = sorted(
        counts.items(), key=lambda kv: (-kv[1], str(kv[0][0]), kv[0][1], str(kv[0][2]))
    )
    return [
        ErrorBreakdownRow(system=s, error_type=e, operation_name=o, count=n)
        for (s, e, o), n in ordered
    ]


def _by_error_type(attributed: list[CountRow]) -> list[ErrorTypeCount]:
    counts: Counter[str | None] = Counter()
    for r in attributed:
        counts[r.error_type] += r.cases
    whole = counts.total()
    known = [*ERROR_TYPES, *sorted(str(t) for t in counts if t not in ERROR_TYPES)]
    return [
        ErrorTypeCount(error_type=t, count=counts[t], share=_share(counts[t], whole)) for t in known
    ]


def _by_system(attributed: list[CountRow]) -> list[SystemCount]:
    per: dict[str | None, Counter[str]] = defaultdict(Counter)
    for r in attributed:
        per[r.system][r.error_type or ""] += r.cases
    ordered = sorted(per.items(), key=lambda kv: (-kv[1].total(), str(kv[0])))
    return [
        SystemCount(system=s, count=c.total(), by_error_type={t: c[t] for t in ERROR_TYPES if c[t]})
        for s, c in ordered
    ]


def _top_operations(attributed: list[CountRow]) -> list[BlamedOperationCount]:
    ids: dict[tuple[str | None, str | None], set[str]] = defaultdict(set)
    counts: Counter[tuple[str | None, str | None]] = Counter()
    for r in attributed:
        key = (r.operation_name, r.operation_system)
        counts[key] += r.cases
        if r.operation_id:
            ids[key].add(r.operation_id)
    whole = counts.total()
    ordered = sorted(counts.items(), key=lambda kv: (-kv[1], str(kv[0][0]), str(kv[0][1])))
    return [
        BlamedOperationCount(
            operation_name=name,
            system=system,
            count=n,
            share=_share(n, whole),
            operations=len(ids[(name, system)]),
        )
        for (name, system), n in ordered
    ]


def _top_prompts(attributed: list[CountRow]) -> list[BlamedPromptCount]:
    counts: Counter[str] = Counter()
    names: dict[str, set[str]] = defaultdict(set)
    for r in attributed:
        if r.prompt is None:
            continue
        counts[r.prompt] += r.cases
        if r.operation_name:
            names[r.prompt].add(r.operation_name)
    whole = sum(r.cases for r in attributed)
    return [
        BlamedPromptCount(
            prompt=prompt,
            count=n,
            share=_share(n, whole),
            operation_names=sorted(names[prompt]),
        )
        for prompt, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    ]


def _cost(rows: Iterable[CountRow]) -> CostTotals:
    stored = [r for r in rows if r.status]
    n = sum(r.cases for r in stored)
    llm_calls = sum(r.llm_calls for r in stored)
    input_tokens = sum(r.input_tokens for r in stored)
    output_tokens = sum(r.output_tokens for r in stored)
    seconds = sum(r.seconds for r in stored)
    return CostTotals(
        attributions=n,
        llm_calls=llm_calls,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        seconds=seconds,
        mean_llm_calls=llm_calls / n if n else 0.0,
        mean_input_tokens=input_tokens / n if n else 0.0,
        mean_output_tokens=output_tokens / n if n else 0.0,
        mean_seconds=seconds / n if n else 0.0,
        llm_judged=sum(r.llm_judged for r in stored),
        on_llm=sum(r.on_llm for r in stored),
    )


def _trend(attributed: list[CountRow], bucket: Bucket) -> list[TrendRow]:
    counts: Counter[tuple[date, str]] = Counter()
    for r in attributed:
        if r.day is not None:
            counts[(day_period(r.day, bucket), r.error_type or "")] += r.cases
    order = {t: i for i, t in enumerate(ERROR_TYPES)}
    return [
        TrendRow(period=p, error_type=t, count=n)
        for (p, t), n in sorted(counts.items(), key=lambda kv: (kv[0][0], order.get(kv[0][1], 99)))
    ]


def summarise(
    project: str, filters: ReportFilters, rows: list[CountRow], counted: Counted = "cases"
) -> Report:
    """The report of ``rows`` (cases already filtered, one row per case or kept count nodes).
    Attributed failed cases are those whose stored attribution has status ``attributed``: only
    they have an error type."""
    attributed = [r for r in rows if r.status == "attributed" and r.verdict == "failed"]
    return Report(
        project=project,
        generated_at=datetime.now(UTC),
        filters=filters,
        counted=counted,
        totals=_totals(rows),
        rows=_breakdown(attributed),
        by_error_type=_by_error_type(attributed),
        by_system=_by_system(attributed),
        top_operations=_top_operations(attributed),
        top_prompts=_top_prompts(attributed),
        cost=_cost(rows),
        trend=_trend(attributed, filters.bucket),
    )


def _too_long(budget_s: float) -> ReadTimedOut:
    """What to tell a caller whose report ran out of time: what narrows it."""
    return ReadTimedOut(
        f"the report ran longer than its time budget of {budget_s:g} s and was stopped; "
        "narrow it to a time range (since, until) or to one system",
        details=[
            {"loc": ["query", "since"], "msg": "count only cases answered from this time"},
            {"loc": ["query", "until"], "msg": "count only cases answered before this time"},
            {"loc": ["query", "system"], "msg": "count only this system's cases"},
        ],
    )


async def build_report(
    session: AsyncSession, project: str, filters: ReportFilters, budget_s: float
) -> Report:
    """The error report of ``project``; an empty project gives a report of zeros.
    ``ReadTimedOut`` (422) when its reads take longer than ``budget_s`` seconds together;
    ``session`` must be a read-access session."""
    filters = check_filters(filters)
    deadline = Deadline.starting_now(budget_s)
    counted: Counted = "kept" if kept_counts_answer(filters) else "cases"
    try:
        if counted == "kept":
            rows = await counts.kept_rows(
                session, deadline, project, filters.system, filters.since, filters.until
            )
        else:
            cases = await reports.case_rows(
                session, deadline, project, filters.system, filters.since, filters.until
            )
            rows = [CountRow.of_case(c) for c in cases]
        rates = await version_rates(session, project, deadline)
    except ReadTimedOut as e:
        raise _too_long(budget_s) from e
    versions = [PromptVersionRate(name=v.label.rsplit("@", 1)[0], **v.model_dump()) for v in rates]
    report = summarise(project, filters, rows, counted)
    return report.model_copy(update={"prompt_versions": versions})


async def build_report_html(
    session: AsyncSession, project: str, filters: ReportFilters, budget_s: float
) -> str:
    """The same report as one self-contained HTML page (plots embedded, no network needed)."""
    from service.reports.html import render_report  # matplotlib loads only when HTML is asked for

    report = await build_report(session, project, filters, budget_s)
    # Drawing the plots takes a few hundred milliseconds: not on the event loop.
    return await asyncio.to_thread(render_report, report)
