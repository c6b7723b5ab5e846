"""What ``POST /judge/check`` takes and what it and ``GET /judge/check`` return."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field


class JudgeCheckRequest(BaseModel):
    """Body of ``POST /judge/check``; optional."""

    model_config = ConfigDict(extra="forbid")

    record: bool = Field(
        False,
        description="Store the outcome for the project and the model: from then on the "
        "project's llm and llm-all results take the measured accuracy as the confidence of an "
        "LLM verdict, and warn when it is below MEMTRACE_LLM_MIN_ACCURACY.",
    )


class RoleScore(BaseModel):
    """How the model did on the probe units written one way (``plain``, ``paraphrase``, ...)."""

    units: int
    answered: int
    correct: int


class JudgeCheckResult(BaseModel):
    """The configured model on the probe set: how often it is right, how often it answers,
    how often its answers are unusable, how long a call takes and what it spent."""

    model: str
    probe_set: str = Field(description="Which probe set was run (changes with the set).")
    questions: int
    units: int
    answered: int = Field(description="Units the model gave a verdict on.")
    correct: int = Field(description="Answered units whose verdict matches the label.")
    accuracy: float | None = Field(
        description="correct / answered; null when the model answered no unit (not 0, not 1)."
    )
    answered_share: float = Field(description="answered / units.")
    calls: int = Field(description="HTTP requests sent to the LLM endpoint.")
    failed_calls: int = Field(description="Calls that gave nothing usable, for any reason.")
    malformed_calls: int = Field(
        description="Calls answered with text holding no usable verdict, or cut at max_tokens."
    )
    malformed_share: float | None = Field(description="malformed_calls / calls; null: no call.")
    failed_share: float | None = Field(description="failed_calls / calls; null: no call.")
    failures: dict[str, int] = Field(description="Failed calls by reason.")
    latency_median_s: float | None = Field(
        description="Median seconds of a call, from sending to the answer (null: no call)."
    )
    latency_p90_s: float | None = Field(description="90th percentile of the same.")
    input_tokens: int
    output_tokens: int
    seconds: float = Field(description="Wall time of the whole check.")
    by_role: dict[str, RoleScore] = Field(description="The same counts per kind of probe unit.")
    checked_at: datetime
    recorded: bool = Field(False, description="Stored for the project (POST with record).")
    min_accuracy: float = Field(description="MEMTRACE_LLM_MIN_ACCURACY, the threshold now.")
    below_threshold: bool = Field(
        description="accuracy is below min_accuracy, or null: recorded, the project's llm "
        "results carry a warning."
    )
