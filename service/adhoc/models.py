"""Body and answer of ``POST /cypher`` (ad-hoc read-only Cypher)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class CypherRequest(BaseModel):
    """Body of ``POST /cypher``. An unknown field is a 422 naming it, as for the wire models:
    a ``project`` here would otherwise be ignored silently (it comes from the query string)."""

    model_config = ConfigDict(extra="forbid")

    query: str = Field(min_length=1, description="One read-only Cypher statement.")
    parameters: dict[str, Any] = Field(
        default_factory=dict, description="Query parameters; `project` is set by the service."
    )
    limit: int | None = Field(None, ge=1, description="Most rows to return (capped by the server).")


class CypherResult(BaseModel):
    columns: list[str]
    rows: list[list[Any]]
    truncated: bool = Field(description="Rows were left unread (see truncated_by).")
    truncated_by: str | None = Field(
        None, description="`rows` (the row limit) or `bytes` (the byte limit), when truncated."
    )
    row_limit: int
    byte_limit: int = Field(description="Most bytes of JSON the rows may take.")
    query_type: str = Field(description="As Neo4j classified the query: always `r` here.")
