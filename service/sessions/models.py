"""What the API returns about sessions: a page of them, and one session with its turns, its
operations and the cases it asked."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from pydantic import BaseModel, Field


@dataclass(frozen=True)
class SessionBounds:
    """How much of a session one answer carries: a page of ``turns`` after ``skip``, at most
    ``operations_per_turn`` operations of a turn and ``outputs_per_operation`` outputs of each,
    ``operations`` and ``cases`` of the session, every content cut to ``value_chars``."""

    skip: int
    turns: int
    operations_per_turn: int
    outputs_per_operation: int
    operations: int
    cases: int
    value_chars: int
    counted: int  # where the summary's counts stop (``MEMTRACE_SESSION_COUNT_CAP``)


class SessionSummary(BaseModel):
    """One row of ``GET /sessions``: what a session holds, counted."""

    id: str
    turns: int = Field(description="Message units of the session (see the session's turns).")
    operations: int = Field(description="Operations naming it (session_id or conversation_id).")
    cases: int = Field(description="Cases whose answer the session gave.")
    failed_cases: int
    capped: bool = Field(
        False,
        description="A count reached MEMTRACE_SESSION_COUNT_CAP and stopped there: the counts "
        "are lower bounds, and first_at and last_at are not given.",
    )
    first_at: datetime | None = Field(
        None, description="Its earliest operation or turn time (none when capped)."
    )
    last_at: datetime | None = Field(
        None, description="Its latest operation or turn time (none when capped)."
    )


class SessionList(BaseModel):
    """A page of sessions in id order; ``next_after`` is the cursor of the next page (pass it
    as ``after``), None on the last page."""

    sessions: list[SessionSummary]
    next_after: str | None = None


class TurnOutput(BaseModel):
    """A unit an operation of a turn produced."""

    id: str
    kind: str | None = None
    content: str | None = None
    content_chars: int | None = Field(
        None, description="Its stored length, when `content` is cut to `value_chars`."
    )


class TurnOperation(BaseModel):
    """An operation that consumed the turn, with (the first of) what it produced."""

    id: str
    name: str | None = None
    kind: str | None = None
    system: str | None = None
    session_id: str | None = None
    ts: datetime | None = None
    outputs: list[TurnOutput]
    output_count: int = Field(description="Everything it produced (outputs may show fewer).")


class Turn(BaseModel):
    """A message of the session, in conversation order, with the operations it caused."""

    index: int = Field(description="Its place in the session, from 0.")
    id: str
    role: str | None = Field(None, description="The `role` attribute, when it has one.")
    content: str | None = None
    content_chars: int | None = None
    at: datetime | None = Field(
        None, description="Its time, else the time of the first operation that read it."
    )
    operations: list[TurnOperation]
    operation_count: int = Field(description="Every operation that consumed it.")


class SessionOperation(BaseModel):
    """An operation of the session, with how many units it consumed and produced."""

    id: str
    name: str | None = None
    kind: str | None = None
    system: str | None = None
    ts: datetime | None = None
    inputs: int
    outputs: int


class SessionCase(BaseModel):
    """A case the session asked: its verdict and stored attribution, if any."""

    id: str
    question: str | None = None
    expected_answer: str | None = None
    verdict: str
    answer: str | None = None
    answered_at: datetime | None = None
    attribution_status: str | None = None
    error_type: str | None = None
    confidence: float | None = None
    reason: str | None = None
    blamed_operation: str | None = None


class SessionView(BaseModel):
    """One session: its counts, a page of its turns, its first operations and its cases. Each
    list is bounded; the counts in ``summary`` say how many there are in all."""

    project: str
    id: str
    summary: SessionSummary
    turns: list[Turn]
    turns_skip: int
    turns_limit: int
    operations: list[SessionOperation]
    operations_limit: int
    cases: list[SessionCase]
    cases_limit: int
    value_chars: int = Field(description="Longest content sent, in characters.")
