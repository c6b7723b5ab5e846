"""The attribution result: what ``POST /attribute/{case_id}`` answers and the graph stores."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field

from service.llm.models import Cost

ErrorType = Literal[
    "ExtractionError", "UpdateError", "DeletionError", "RetrievalError", "ResponseError"
]
Status = Literal["attributed", "inconclusive", "not_failed", "unanswerable"]
JudgeKind = Literal["heuristic", "llm", "llm-all"]


class BlamedOperation(BaseModel):
    id: str
    name: str
    kind: str


class Searched(BaseModel):
    """How much of the graph the walk looked at."""

    units: int = 0
    operations: int = 0
    scope: str | None = Field(
        None,
        description="How the evidence search's scope was found: attributes (the trace named "
        "its conversation or user), sessions, lineage (the trace named neither: the "
        "messages near the answer's lineage and the stores it read), or recent (nothing "
        "linked the lineage to a message: the messages of the project's latest building "
        "operations before the answer). None when the case named its evidence.",
    )
    scope_messages: int | None = Field(
        None, description="Source messages the evidence search ranked (None: not searched)."
    )
    scope_cut: bool = Field(
        False,
        description="True when the scope met the graph limit (attribution_graph_limit) and "
        "messages beyond it were not searched: the result may change with the project's size.",
    )


class JudgeInfo(BaseModel):
    """Which judge decided, and how much of the decision came from the LLM."""

    kind: JudgeKind
    model: str | None = None
    llm_calls: int = Field(0, description="HTTP requests sent to the LLM endpoint.")
    llm_verdicts: int = Field(
        0,
        description="Unit verdicts the walk took from the LLM (0: the result rests on the "
        "heuristic judge).",
    )
    llm_failures: int = Field(
        0, description="LLM calls that gave nothing usable (timeout, cut, malformed, refused)."
    )
    warning: str | None = Field(
        None, description="Set when an llm judge's result rests on the heuristic judge alone."
    )
    requested: JudgeKind | None = Field(
        None,
        description="The judge the request asked for, when another one decided: an llm or "
        "llm-all request whose model was stood down by its judge check is decided by the "
        "heuristic (kind), and this names what was asked.",
    )
    stood_down: str | None = Field(
        None,
        description="Why the requested LLM judge was not used: its model's judge check "
        "(accuracy below MEMTRACE_LLM_MIN_ACCURACY, or no usable verdict).",
    )


class AttributionResult(BaseModel):
    """Which operation broke the case's answer, how sure we are, and what it cost to find out."""

    case_id: str
    status: Status
    error_type: ErrorType | None = None
    operation: BlamedOperation | None = None
    confidence: float = Field(0.0, ge=0.0, le=1.0)
    reason: str
    evidence_path: list[str] = Field(
        default_factory=list,
        description="Unit and operation ids from the evidence to where the information was lost.",
    )
    evidence: list[str] = Field(
        default_factory=list,
        description="The units the walk took as the case's evidence: its evidence_units "
        "(those recorded by the answer), else the source messages it found. The audits read "
        "them for a case without evidence_units.",
    )
    decided_by: str | None = Field(
        None,
        description="Set on an inconclusive result: what would decide it (the verdicts the "
        "judge could not give, the evidence to name, an operation to record, or the operation "
        "a stricter reading of the heuristic's verdicts blames instead). Its operation and "
        "error_type, where given, are the best candidate.",
    )
    searched: Searched = Field(default_factory=Searched)
    judge: JudgeInfo
    cost: Cost = Field(default_factory=Cost)
    created_at: datetime | None = None


class AttributeRequest(BaseModel):
    """Body of ``POST /attribute/{case_id}``; every field optional."""

    judge: JudgeKind = "heuristic"
    max_llm_calls: int | None = Field(None, ge=0, le=100)
    refresh: bool = False
