"""Wire format of ``POST /traces``: a batch of units, operations and cases.

This is the one definition: the MemTrace service validates what it receives with these models
(``service.traces.models`` re-exports them) and the client builds what it sends with them.

Invariants a batch must hold before anything is written (checked here, at the edge):

- ids are 1-256 characters; ``project`` is 1-128 characters of ``[A-Za-z0-9_.-]``;
- timestamps are timezone-aware (a naive timestamp is read as UTC) and stored in UTC, so they
  must stay within years 1-9999 once converted (``0001-01-01T00:00+01:00`` does not);
- an operation's inputs and outputs are unit ids or whole unit objects, and keep their order;
- ``attributes`` are JSON objects; they are stored verbatim as a JSON string, so their numbers
  are finite (``1e400`` parses as infinity, which JSON cannot carry back);
- a unit's memory entry (``attributes.memory_id``, else ``entry_id``) is indexed, so it is
  bounded like an id: at most 256 characters of valid Unicode.

Units are immutable: a unit id names one version of one piece of information. A memory entry
that is updated gets a new unit; a deletion produces a ``tombstone`` unit.
"""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    WithJsonSchema,
)
from pydantic_core import InitErrorDetails, PydanticCustomError, ValidationError

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
    "optimization",
    "other",
]
Verdict = Literal["failed", "passed", "unknown"]

MAX_ID = 256
Identifier = Annotated[str, StringConstraints(min_length=1, max_length=MAX_ID)]
PROJECT_NAME_RULE = "1 to 128 characters, each a letter (A-Z, a-z), a digit, '_', '.' or '-'"
"""What a project name may be, in words: the sentence a refused name is answered with."""
_PROJECT_NAME = re.compile(r"[A-Za-z0-9_.\-]{1,128}")


def is_project_name(name: str) -> bool:
    return _PROJECT_NAME.fullmatch(name) is not None


def _project_name(name: str) -> str:
    # A sentence instead of pydantic's "String should match pattern '^[A-Za-z0-9_.\-]{1,128}$'":
    # the 422 is read by people who typed a project name, not a regular expression.
    if not is_project_name(name):
        raise PydanticCustomError("project_name", f"a project name is {PROJECT_NAME_RULE}")
    return name


ProjectName = Annotated[
    str,
    AfterValidator(_project_name),
    # The API description keeps the exact rule for generated clients and fuzzers.
    WithJsonSchema(
        {"type": "string", "minLength": 1, "maxLength": 128, "pattern": "^[A-Za-z0-9_.\\-]+$"}
    ),
]

ENTRY_KEYS = ("memory_id", "entry_id")
"""Attribute keys naming the memory entry a unit is a version of, in order of preference."""


def _invalid(kind: str, message: str, loc: tuple[str | int, ...]) -> ValidationError:
    """A validation error at ``loc`` below the field being validated (pydantic prefixes the
    field's own location), so the 422 names the very attribute."""
    error = PydanticCustomError(kind, message)
    return ValidationError.from_exception_data(
        "attributes", [InitErrorDetails(type=error, loc=loc, input=None)]
    )


def _finite(attributes: dict[str, Any]) -> dict[str, Any]:
    """``attributes`` when every number in it is finite. Walked with a stack, not recursion: the
    JSON parser already bounds the depth, and a recursive walk would only lower that bound."""
    stack: list[tuple[tuple[str | int, ...], Any]] = [((), attributes)]
    while stack:
        loc, value = stack.pop()
        if isinstance(value, float) and not math.isfinite(value):
            raise _invalid("finite_number", "numbers must be finite (JSON has no inf or NaN)", loc)
        if isinstance(value, dict):
            stack.extend(((*loc, k), v) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend(((*loc, i), v) for i, v in enumerate(value))
    return attributes


Attributes = Annotated[dict[str, Any], AfterValidator(_finite)]


def memory_entry(attributes: dict[str, Any]) -> str | None:
    """The memory entry a unit is a version of (``memory_id``, else ``entry_id``), as a string."""
    value = next((attributes[k] for k in ENTRY_KEYS if attributes.get(k) is not None), None)
    return None if value is None else str(value)


def _entry_fits_the_index(attributes: dict[str, Any]) -> dict[str, Any]:
    """Neo4j refuses to index a property over its key size, and the driver cannot send a lone
    surrogate: both were 500s deep in the write. Refused here, at the attribute, instead."""
    entry = memory_entry(attributes)
    if entry is None:
        return attributes
    key = next(k for k in ENTRY_KEYS if attributes.get(k) is not None)
    if len(entry) > MAX_ID:
        message = f"a memory entry is indexed: at most {MAX_ID} characters, not {len(entry)}"
        raise _invalid("memory_entry", message, (key,))
    try:
        entry.encode("utf-8")
    except UnicodeEncodeError:
        raise _invalid("memory_entry", "a memory entry must be valid Unicode", (key,)) from None
    return attributes


def _as_utc(value: datetime | None) -> datetime | None:
    if value is None:
        return None
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    try:
        return value.astimezone(UTC)
    except OverflowError:
        raise ValueError("out of range once converted to UTC (years 1-9999)") from None


Timestamp = Annotated[datetime, AfterValidator(_as_utc)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class UnitIn(_Strict):
    """One piece of information: a message, a memory version, a query, a context, an answer."""

    id: Identifier
    kind: UnitKind
    content: str = Field(max_length=1_000_000)
    ts: Timestamp | None = None
    attributes: Annotated[Attributes, AfterValidator(_entry_fits_the_index)] = Field(
        default_factory=dict
    )


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


class VerdictIn(_Strict):
    """A verdict given after the answer (``POST /cases/{case_id}/verdict``), the way a score
    is sent to a trace later: from user feedback or an evaluation that ran afterwards.
    ``expected_answer`` replaces the case's when given; ``note`` is kept in the case's
    attributes as ``verdict_note``. Sending the same verdict again changes nothing."""

    verdict: Verdict
    expected_answer: str | None = Field(None, max_length=100_000)
    note: str | None = Field(None, max_length=10_000)


class TraceCaseIn(_Strict):
    """A case recorded after the fact on a trace already sent over OTLP (``POST /otlp/cases``),
    as feedback reaches a trace later in Langfuse or Phoenix: the service finds the answer (the
    output of the trace's last answering LLM call), the question (the last user message that
    call read, unless ``question`` is given) and the conversation in the stored spans. Sending
    the same case again changes nothing; the same id with other content is a 409."""

    project: ProjectName | None = None
    case_id: Identifier
    trace_id: Annotated[str, StringConstraints(pattern=r"^[0-9a-fA-F]{32}$")] = Field(
        description="The trace's id, 32 hex digits, as OpenTelemetry prints it."
    )
    verdict: Verdict = "unknown"
    expected_answer: str = Field(max_length=100_000)
    question: str | None = Field(None, max_length=100_000)


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
    """What a batch did: ``created`` new (or newly defined) nodes, ``existing`` identical ones,
    in ``project``; ``warnings`` are what the writer should know though nothing was refused
    (a batch that named no project and went to ``default``)."""

    project: str
    created: KindCounts
    existing: KindCounts
    warnings: list[str] = Field(default_factory=list)
