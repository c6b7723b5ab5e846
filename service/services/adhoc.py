"""Ad-hoc read-only Cypher for power users, confined to one project (see service.cypher_guard)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from neo4j import AsyncSession
from neo4j.graph import Node, Path, Relationship
from pydantic import BaseModel, Field

from service.cypher_guard import query_problems
from service.errors import InvalidInput, QueryRefused
from service.repository import adhoc
from service.settings import Settings


class CypherRequest(BaseModel):
    """Body of ``POST /cypher``."""

    query: str = Field(min_length=1, description="One read-only Cypher statement.")
    parameters: dict[str, Any] = Field(
        default_factory=dict, description="Query parameters; `project` is set by the service."
    )
    limit: int | None = Field(None, ge=1, description="Most rows to return (capped by the server).")


class CypherResult(BaseModel):
    columns: list[str]
    rows: list[list[Any]]
    truncated: bool = Field(description="More rows were left than the row limit.")
    row_limit: int
    query_type: str = Field(description="As Neo4j classified the query: always `r` here.")


def to_json(value: Any) -> Any:
    """Driver values as JSON: nodes and relationships as their labels/type and properties."""
    if isinstance(value, Node):
        return {"labels": sorted(value.labels), "properties": to_json(dict(value))}
    if isinstance(value, Relationship):
        return {"type": value.type, "properties": to_json(dict(value))}
    if isinstance(value, Path):
        return {
            "nodes": [to_json(n) for n in value.nodes],
            "relationships": [to_json(r) for r in value.relationships],
        }
    if isinstance(value, Mapping):
        return {str(k): to_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_json(v) for v in value]
    if hasattr(value, "iso_format"):
        return value.iso_format()
    if isinstance(value, bytes):
        return value.hex()
    return value


async def run_cypher(
    session: AsyncSession, request: CypherRequest, project: str, settings: Settings
) -> CypherResult:
    """Plan the query, refuse it unless it is read-only and pinned to ``project``, then run it
    in a read transaction with the timeout and row limit of the settings."""
    if len(request.query) > settings.cypher_max_length:
        raise InvalidInput(
            f"the query is longer than {settings.cypher_max_length} characters",
            details=[{"loc": ["body", "query"], "msg": "too long"}],
        )
    if "project" in request.parameters:
        raise InvalidInput(
            "`project` is set by the service from the project query parameter",
            details=[{"loc": ["body", "parameters", "project"], "msg": "reserved"}],
        )
    parameters = {**request.parameters, "project": project}
    timeout = settings.cypher_timeout_s
    query_type, plan = await adhoc.explain(session, request.query, parameters, timeout)
    problems = query_problems(query_type, plan)
    if problems:
        raise QueryRefused(
            f"the query was refused: {problems[0]}"
            + (f" (and {len(problems) - 1} more reasons)" if len(problems) > 1 else ""),
            details=[{"loc": ["body", "query"], "msg": p} for p in problems],
        )
    limit = min(request.limit or settings.cypher_max_rows, settings.cypher_max_rows)
    columns, rows, truncated = await adhoc.run_read(
        session, request.query, parameters, timeout, limit
    )
    return CypherResult(
        columns=columns,
        rows=[[to_json(v) for v in row] for row in rows],
        truncated=truncated,
        row_limit=limit,
        query_type=query_type or "r",
    )
