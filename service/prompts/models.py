"""What ``/prompts`` answers and what ``POST /prompts/{name}/optimize`` takes."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

from service.attribution.models import ErrorType
from service.llm.models import Cost
from service.traces.models import Timestamp


class PromptVersionSummary(BaseModel):
    """One version of a prompt and how it fared.

    ``failure_rate`` is ``failures / operations``: of the operations that ran with this version,
    the share blamed by a stored attribution (each failed case counts once); null before any use.
    """

    id: str = Field(description="The version's unit id, prompt:<name>@<hash of text>.")
    label: str = Field(description="<name>@<n>, n the rank of the version by first use.")
    version: int
    hash: str
    first_used: datetime | None = None
    operations: int = Field(description="Operations that ran with this version.")
    failures: int = Field(description="Attributed failed cases blamed on those operations.")
    failures_by_error_type: dict[str, int] = Field(default_factory=dict)
    failure_rate: float | None = None


class PromptSummary(BaseModel):
    """One row of ``GET /prompts``."""

    name: str
    latest: str = Field(description="The label of the newest version.")
    versions: list[PromptVersionSummary]


class PromptVersion(PromptVersionSummary):
    """A version with its text and where it came from."""

    text: str
    placeholders: list[str]
    parent: str | None = Field(None, description="The version it was optimised from.")
    produced_by: str | None = Field(None, description="The optimization operation's id.")
    motivated_by: list[str] = Field(
        default_factory=list, description="Ids of the failed cases the optimisation used."
    )
    forced: str | None = Field(
        None,
        description="Set when the optimisation that wrote this version was forced past the "
        "judge check that stood its model down: what the check found.",
    )


class PromptDetail(BaseModel):
    """``GET /prompts/{name}``: every version, oldest first."""

    name: str
    latest: str
    versions: list[PromptVersion]


class OptimizeRequest(BaseModel):
    """Body of ``POST /prompts/{name}/optimize``; every field optional.

    Cases: failed cases whose stored attribution blames an operation that ran with the newest
    version, filtered by the attribution's error type, the operation's system and when the
    operation ran (``since`` inclusive, ``until`` exclusive); at most ``max_cases``, in case id
    order. Budget: the whole optimisation makes at most ``max_llm_calls`` calls (retries
    included) and spends at most ``max_tokens`` tokens (input + output, as the endpoint reports).
    """

    model_config = ConfigDict(extra="forbid")

    error_types: list[ErrorType] | None = Field(None, min_length=1)
    system: str | None = Field(None, max_length=128)
    since: Timestamp | None = Field(None, description="No zone: UTC.")
    until: Timestamp | None = Field(None, description="No zone: UTC.")
    max_cases: int = Field(16, ge=1, le=500)
    batch_size: int = Field(8, ge=1, le=64, description="Feedback items aggregated per call.")
    max_llm_calls: int = Field(30, ge=3, le=1000)
    max_tokens: int = Field(200_000, ge=1000, le=50_000_000)
    force: bool = Field(
        False,
        description="Optimise even when the configured model is stood down by its judge check "
        "(below MEMTRACE_LLM_MIN_ACCURACY, or no usable verdict); the new version and the "
        "result then say it was forced, and why.",
    )


class CaseFeedback(BaseModel):
    """The LLM's feedback on the prompt from one failed case."""

    case_id: str
    error_type: str | None
    operation_id: str
    feedback: str


class OptimizeResult(BaseModel):
    """The stored proposal: the new version, how it differs, why, and what it cost."""

    name: str
    old_version: str
    new_version: str
    new_label: str
    operation_id: str = Field(description="The optimization operation that produced it.")
    text: str
    diff: str = Field(description="Unified diff from the old text to the new.")
    feedback_summary: str
    feedback: list[CaseFeedback]
    cases: list[str]
    cost: Cost
    forced: str | None = Field(
        None,
        description="Set when force=true wrote this version with a model its judge check stood "
        "down: what the check found.",
    )
