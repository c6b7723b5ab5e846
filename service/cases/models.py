"""What the API returns about the stored graph (cases and ancestor subgraphs), and the verdict
a case is given later (``VerdictIn``: defined with the wire models, since the SDK sends it too)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from memtrace_client.models import VerdictIn
from pydantic import BaseModel, Field

__all__ = ["VerdictIn"]  # re-exported: the verdict route's request model


CaseOrder = Literal["id", "newest"]
"""How a case list is sorted: by id, or by answer time, newest first."""


class CaseFilters(BaseModel):
    """Which cases a list shows (``GET /cases``, the console's case list): every filter given
    must hold; ``None`` leaves it out."""

    verdict: str | None = None
    text: str | None = Field(None, description="In the question or the given answer, any case.")
    system: str | None = None
    session: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    error_type: str | None = None
    attributed: bool | None = None
    prompt_version: str | None = Field(
        None, description="A version's unit id: blamed on an operation that ran with it."
    )
    newest_first: bool = False


class CaseSummary(BaseModel):
    """One row of ``GET /cases``: enough to pick the case without opening it."""

    id: str
    verdict: str
    question: str | None = None
    expected_answer: str | None = None
    answer: str | None = None
    answered_at: datetime | None = None
    system: str | None = None
    session_id: str | None = None
    attribution_status: str | None = None
    error_type: str | None = None


class CaseView(BaseModel):
    """A stored case with the ids it links to."""

    project: str
    id: str
    question: str
    expected_answer: str
    verdict: str
    answer_unit: str | None
    evidence_units: list[str]
    attributes: dict[str, Any]


class SubgraphNode(BaseModel):
    """A unit or an operation among a case's ancestors. ``(type, id)`` identifies it."""

    type: Literal["unit", "operation"]
    id: str
    kind: str | None = None
    name: str | None = None
    content: str | None = None
    system: str | None = None
    session_id: str | None = None
    ts: datetime | None = None
    defined: bool = True
    attributes: dict[str, Any] = {}


class SubgraphEdge(BaseModel):
    """``operation`` CONSUMES or PRODUCES ``unit`` at ``position`` in its inputs or outputs."""

    type: Literal["CONSUMES", "PRODUCES"]
    operation: str
    unit: str
    position: int


class Subgraph(BaseModel):
    """The ancestors of a case's answer unit; ``truncated`` says the node limit was hit."""

    case_id: str
    answer_unit: str
    nodes: list[SubgraphNode]
    edges: list[SubgraphEdge]
    node_limit: int
    truncated: bool
