"""What ``GET /report`` returns: the distribution of a project's attributed errors.

Every number is computed from the stored attributions (``(:Case)-[:ATTRIBUTED]->(:Attribution)``)
and the cases they belong to, in one read transaction, so the parts of one report agree. A stored
attribution is always one made for the case's current verdict (a verdict that changes deletes it:
``cypher/verdicts/record_verdict.cypher``), so ``attributed`` never exceeds ``failed``.

Two rules decide where a case is counted:

- **A case's system** is the ``system`` of the operation that produced its answer unit
  (``(case)-[:ANSWERED_BY]->(answer)-[:PRODUCED_BY]->(op)``, the earliest by ``ts`` if several);
  when the answer has no producer with a system, the blamed operation's system; else none (null).
  The ``system`` filter and the per-system counts use it. (``GET /attributions?system=`` filters
  on the blamed operation's system instead; the two differ only when a system's answer is blamed
  on another system's operation.)
- **A case's time** is the ``ts`` of its answer unit (when the wrong answer was given); when the
  answer has none, the attribution's ``created_at``; else none. ``since`` (inclusive) and ``until``
  (exclusive) filter on it, and the trend buckets by it (UTC days, or weeks from Monday). A case
  with no time is left out when ``since`` or ``until`` is given, and out of the trend.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Literal

from pydantic import BaseModel, Field

Bucket = Literal["day", "week"]
Counted = Literal["kept", "cases"]
"""How a report was counted: from the kept counts (``kept``), or case by case (``cases``)."""


class ReportFilters(BaseModel):
    """The filters a report was made with (null: not filtered)."""

    system: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    bucket: Bucket = "day"
    recount: bool = False


class ReportTotals(BaseModel):
    """How many cases there are and what became of their attribution."""

    cases: int = Field(description="Cases in scope, whatever their verdict.")
    failed: int = Field(description="Cases whose verdict is 'failed'.")
    attributions: int = Field(description="Cases with a stored attribution (any status).")
    attributed: int = Field(description="Attributions with status 'attributed'.")
    inconclusive: int
    not_failed: int
    unanswerable: int
    failed_unattributed: int = Field(description="Failed cases with no stored attribution yet.")


class ErrorBreakdownRow(BaseModel):
    """Attributed failed cases of one system, error type and blamed operation name."""

    system: str | None
    error_type: str
    operation_name: str | None
    count: int


class ErrorTypeCount(BaseModel):
    error_type: str
    count: int
    share: float = Field(description="count / attributed failed cases (0 when there are none).")


class SystemCount(BaseModel):
    """Attributed failed cases of one system, with their split by error type."""

    system: str | None
    count: int
    by_error_type: dict[str, int]


class BlamedOperationCount(BaseModel):
    """How often operations of one name and system were blamed."""

    operation_name: str | None
    system: str | None
    count: int
    share: float
    operations: int = Field(description="Distinct blamed operation ids among them.")


class BlamedPromptCount(BaseModel):
    """How often an operation carrying this ``prompt`` attribute was blamed."""

    prompt: str
    count: int
    share: float
    operation_names: list[str]


class PromptVersionRate(BaseModel):
    """A prompt version and the failures blamed on the operations that ran with it (the whole
    project: the report's filters do not apply), so consecutive versions read as before/after."""

    name: str
    label: str
    id: str
    operations: int
    failures: int
    failures_by_error_type: dict[str, int]
    failure_rate: float | None


class CostTotals(BaseModel):
    """What the stored attributions spent, summed, and the mean per attribution."""

    attributions: int
    llm_calls: int
    input_tokens: int
    output_tokens: int
    seconds: float
    mean_llm_calls: float
    mean_input_tokens: float
    mean_output_tokens: float
    mean_seconds: float
    llm_judged: int = Field(0, description="Attributions made with an llm or llm-all judge.")
    on_llm: int = Field(
        0,
        description="Of those, the ones that took at least one verdict from the LLM (the rest "
        "rest on the heuristic judge: the LLM was not needed or gave nothing usable).",
    )


class TrendRow(BaseModel):
    """Attributed failed cases of one error type in the period starting at ``period``."""

    period: date
    error_type: str
    count: int


class Report(BaseModel):
    """The error distribution of a project's attributed failed cases."""

    project: str
    generated_at: datetime
    filters: ReportFilters
    counted: Counted = Field(
        "cases",
        description="'kept': read from the counts kept as cases change (cost independent of the "
        "project's size); 'cases': counted case by case (recount=true, or a since/until "
        "that is not a UTC midnight).",
    )
    totals: ReportTotals
    rows: list[ErrorBreakdownRow] = Field(
        description="By system x error type x blamed operation name, most frequent first."
    )
    by_error_type: list[ErrorTypeCount] = Field(description="Every error type, in taxonomy order.")
    by_system: list[SystemCount]
    top_operations: list[BlamedOperationCount]
    top_prompts: list[BlamedPromptCount]
    prompt_versions: list[PromptVersionRate] = Field(
        default_factory=list, description="Every prompt version, by name then version."
    )
    cost: CostTotals
    trend: list[TrendRow] = Field(description="Per period and error type; zero rows left out.")
