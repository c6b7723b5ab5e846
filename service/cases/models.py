"""What the API returns about the stored graph (cases and ancestor subgraphs), and the verdict
a case is given later (``VerdictIn``: defined with the wire models, since the SDK sends it too)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from memtrace_client.models import VerdictIn
from pydantic import BaseModel, Field

__all__ = ["VerdictIn"]  # re-exported: the verdict route's request model


@dataclass(frozen=True)
class SubgraphBounds:
    """How much of a case's ancestry one answer carries: at most ``node_limit`` nodes, taking
    at most ``max_bytes`` of JSON, each content cut to ``value_chars`` characters."""

    node_limit: int
    max_bytes: int
    value_chars: int


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
    cut: dict[str, int] = Field(
        {},
        description="The values sent shorter than stored, each with its stored length in "
        "characters: `content` (its first `value_chars` characters are sent) and `attributes` "
        "(left out: as JSON, longer than `value_chars`).",
    )


class SubgraphEdge(BaseModel):
    """``operation`` CONSUMES or PRODUCES ``unit`` at ``position`` in its inputs or outputs."""

    type: Literal["CONSUMES", "PRODUCES"]
    operation: str
    unit: str
    position: int


class Subgraph(BaseModel):
    """The ancestors of a case's answer unit; ``truncated`` says some were left out (at the node
    limit or the byte limit: ``truncated_by``), ``cut_values`` how many values were cut."""

    case_id: str
    answer_unit: str
    nodes: list[SubgraphNode]
    edges: list[SubgraphEdge]
    node_limit: int
    truncated: bool
    truncated_by: Literal["nodes", "bytes"] | None = Field(
        None, description="`nodes` (the node limit) or `bytes` (the byte limit), when truncated."
    )
    byte_limit: int = Field(description="Most bytes of JSON the subgraph may take.")
    value_chars: int = Field(description="Longest content a node carries, in characters.")
    cut_values: int = Field(0, description="Values sent shorter than stored (see a node's cut).")
