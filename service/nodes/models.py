"""What ``GET /units/{id}`` and ``GET /operations/{id}`` answer."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field


class UnitView(BaseModel):
    """A unit with the operations around it and the cases that name it (at most 200 of each)."""

    id: str
    kind: str | None
    content: str | None
    ts: datetime | None
    attributes: dict[str, Any]
    defined: bool = Field(description="False: referenced by id, never sent with its content.")
    produced_by: list[str]
    consumed_by: list[str]
    cases: list[str] = Field(description="Cases naming it as their answer or evidence.")


class OperationView(BaseModel):
    """An operation with its inputs and outputs and the cases blamed on it (at most 200 each)."""

    id: str
    name: str | None
    kind: str | None
    system: str | None
    session_id: str | None
    ts: datetime | None
    attributes: dict[str, Any]
    consumes: list[str]
    produces: list[str]
    blamed_in: list[str] = Field(description="Cases whose stored attribution blames it.")
