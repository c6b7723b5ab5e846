"""Wire format of ``POST /traces``: a batch of units, operations and cases.

This is the one definition: the MemTrace service validates what it receives with these models
(``graph_schema.models`` re-exports them) and the client builds what it sends with them.

Invariants a batch must hold before anything is written (checked here, at the edge):

- ids are 1-256 characters; ``project`` is 1-128 characters of ``[A-Za-z0-9_.-]``;
- timestamps are timezone-aware (a naive timestamp is read as UTC);
- an operation's inputs and outputs are unit ids or whole unit objects, and keep their order;
- ``attributes`` are JSON objects; they are stored verbatim as a JSON string.

Units are immutable: a unit id names one version of one piece of information. A memory entry
that is updated gets a new unit; a deletion produces a ``tombstone`` unit.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints

UnitKind = Literal[
    "message", "memory", "query", "context", "answer", "prompt", "tombstone", "other"
]
OperationKind = Literal[
    "ingest",
    "extraction",
    "update",
    "deletion",
    "embedding",
    "retrieval",
    "response",
    "evaluation",
    "other",
]
Verdict = Literal["failed", "passed", "unknown"]

Identifier = Annotated[str, StringConstraints(min_length=1, max_length=256)]
ProjectName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_.\-]{1,128}$")]
Attributes = dict[str, Any]


def _as_utc(value: datetime | None) -> datetime | None:
    if value is None:
        return None
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


Timestamp = Annotated[datetime, AfterValidator(_as_utc)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class UnitIn(_Strict):
    """One piece of information: a message, a memory version, a query, a context, an answer."""

    id: Identifier
    kind: UnitKind
    content: str = Field(max_length=1_000_000)
    ts: Timestamp | None = None
    attributes: Attributes = Field(default_factory=dict)


UnitRef = Identifier | UnitIn


class OperationIn(_Strict):
    """One step of a memory system: what it consumed and what it produced, in order."""

    id: Identifier
    name: Annotated[str, StringConstraints(min_length=1, max_length=256)]
    kind: OperationKind
    system: Annotated[str, StringConstraints(max_length=128)] | None = None
    session_id: Annotated[str, StringConstraints(max_length=256)] | None = None
    ts: Timestamp
    inputs: list[UnitRef] = Field(default_factory=list, max_length=10_000)
    outputs: list[UnitRef] = Field(default_factory=list, max_length=10_000)
    attributes: Attributes = Field(default_factory=dict)


class CaseIn(_Strict):
    """A question put to the memory system, the answer it gave, and whether that was right."""

    id: Identifier
    question: str = Field(max_length=100_000)
    expected_answer: str = Field(max_length=100_000)
    answer_unit: Identifier | None = None
    verdict: Verdict = "unknown"
    evidence_units: list[Identifier] = Field(default_factory=list, max_length=10_000)
    attributes: Attributes = Field(default_factory=dict)


class TraceBatch(_Strict):
    """What one ``POST /traces`` carries. All of it is written in one transaction, or none."""

    project: ProjectName = "default"
    units: list[UnitIn] = Field(default_factory=list)
    operations: list[OperationIn] = Field(default_factory=list)
    cases: list[CaseIn] = Field(default_factory=list)


class KindCounts(BaseModel):
    units: int = 0
    operations: int = 0
    cases: int = 0


class IngestResult(BaseModel):
    """What a batch did: ``created`` new (or newly defined) nodes, ``existing`` identical ones."""

    project: str
    created: KindCounts
    existing: KindCounts
