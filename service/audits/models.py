"""What the audit endpoints return: the catalogue of audits and one page of an audit's rows.

An audit is a read-only question asked of a whole project ("which messages never reached a
memory?"). Its rows are plain JSON objects whose keys are the audit's declared ``columns``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal

from pydantic import BaseModel, Field

ParameterType = Literal["int", "bool", "string"]
AuditRow = dict[str, Any]
# Finishes an audit's rule in Python: a candidate row and the audit's parameters in, the row to
# report (with derived columns) or None out.
RowFilter = Callable[[AuditRow, Mapping[str, Any]], AuditRow | None]


class AuditParameter(BaseModel):
    """A query parameter an audit takes beside ``project``, ``skip`` and ``limit``."""

    name: str
    type: ParameterType
    default: int | bool | str | None
    description: str
    minimum: int | None = None
    maximum: int | None = None
    choices: list[str] | None = None


class AuditColumn(BaseModel):
    name: str
    description: str


class AuditInfo(BaseModel):
    """One audit as ``GET /audits`` lists it."""

    name: str
    description: str
    parameters: list[AuditParameter]
    columns: list[AuditColumn]


class AuditPage(BaseModel):
    """One page of an audit's rows. ``next_skip`` is the ``skip`` of the next page, or null when
    there is none. Audits that finish their rule in the service count candidates there, not
    rows, and a page of theirs may be short (even empty) when it read its most candidates: page
    with ``next_skip`` until it is null, never with ``skip + limit``."""

    audit: str
    project: str
    parameters: dict[str, int | bool | str | None]
    skip: int
    limit: int
    columns: list[str]
    rows: list[dict[str, Any]]
    next_skip: int | None
    next_cursor: str | None = Field(
        None,
        description="Audits paged by a cursor over the failed cases (deleted_then_needed, "
        "retrieval_misses): pass it as cursor for the next page; null at the end. Their "
        "next_skip is always null.",
    )
