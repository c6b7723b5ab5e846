"""Ad-hoc read-only Cypher for power users, confined to one project and bounded.

Order of checks, cheapest and most dangerous first: the parameters (``parameters``) and
the text (``service.adhoc.text``: length, nesting, operators, one plain query, no backquoted
names) before anything reaches Neo4j; then Neo4j's plan (``service.adhoc.guard``: read-only,
pinned to the project); then the run, under one time budget shared with the planning, and
with a row and a byte budget for the answer. The run is of the query wrapped by
``service.adhoc.bound``, so that a row too big for the byte budget never leaves Neo4j.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from typing import Any

from neo4j import AsyncSession
from neo4j.graph import Node, Path, Relationship

from service.adhoc import repository as adhoc
from service.adhoc.bound import (
    MAX_ROW_BYTES,
    RESERVED,
    ROW_BYTES,
    UnboundableQuery,
    bounded_query,
)
from service.adhoc.guard import query_problems
from service.adhoc.models import CypherRequest, CypherResult
from service.adhoc.parameters import check_parameters
from service.adhoc.text import QueryTextError, TextLimits, check_query_text
from service.errors import InvalidInput, QueryFailed, QueryRefused
from service.read_budget import ByteBudget, json_bytes
from service.settings import Settings


def to_json(value: Any) -> Any:
    """Driver values as JSON: nodes and relationships as their labels/type and properties;
    NaN and infinities (which JSON has no numbers for) as the strings Cypher prints."""
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
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if hasattr(value, "iso_format"):
        return value.iso_format()
    if isinstance(value, bytes):
        return value.hex()
    return value


class _Budget:
    """Collects rows until the row limit or the byte limit would be passed."""

    def __init__(self, max_rows: int, max_bytes: int) -> None:
        self.max_rows, self.max_bytes = max_rows, max_bytes
        self.rows: list[list[Any]] = []
        self.bytes = ByteBudget(max_bytes, used=2)  # the brackets of the list of rows
        self.stopped_by: str | None = None

    def keep(self, raw: list[Any], estimate: int = 0) -> bool:
        """Keep a row of raw values; ``estimate`` is Neo4j's lower bound of its size (the
        values are null when it is above the whole budget)."""
        if len(self.rows) >= self.max_rows:
            self.stopped_by = "rows"
            return False
        if not self.bytes.fits(estimate):
            self.stopped_by = "bytes"
            return False
        row = [to_json(v) for v in raw]
        if not self.bytes.take(json_bytes(row) + 1):  # the row and its comma
            self.stopped_by = "bytes"
            return False
        self.rows.append(row)
        return True

    def keep_bounded(self, raw: list[Any]) -> bool:
        """``keep`` for a row of the wrapped query: its values, then its estimate (no number:
        Neo4j sent no values either, as ``null <= budget`` is not true)."""
        estimate = raw[-1] if isinstance(raw[-1], int) else self.max_bytes + 1
        return self.keep(raw[:-1], estimate)


def _check_text(text: str, settings: Settings) -> None:
    if len(text) > settings.cypher_max_length:
        raise InvalidInput(
            f"the query is longer than {settings.cypher_max_length} characters",
            details=[{"loc": ["body", "query"], "msg": "too long"}],
        )
    limits = TextLimits(
        settings.cypher_max_length, settings.cypher_max_depth, settings.cypher_max_operators
    )
    try:
        check_query_text(text, limits)
    except QueryTextError as e:
        raise QueryRefused(
            f"the query was refused: {e.reason}",
            details=[{"loc": ["body", "query"], "msg": e.reason}],
        ) from e


def _refused(reason: str) -> QueryRefused:
    return QueryRefused(
        f"the query was refused: {reason}", details=[{"loc": ["body", "query"], "msg": reason}]
    )


async def run_cypher(
    session: AsyncSession, request: CypherRequest, project: str, settings: Settings
) -> CypherResult:
    """Check the parameters and the text, plan the query, refuse it unless it is read-only and
    pinned to ``project``, then run it within the time, row and byte limits of the settings.

    ``session`` must be a read-access session: the query runs in its transactions.
    """
    reserved = [n for n in request.parameters if n == "project" or n.startswith(RESERVED)]
    if reserved:
        raise InvalidInput(
            "`project` (from the project query parameter) and parameters starting with "
            f"{RESERVED} (the answer's bounds) are set by the service",
            details=[{"loc": ["body", "parameters", n], "msg": "reserved"} for n in reserved],
        )
    check_parameters(request.parameters)
    _check_text(request.query, settings)
    parameters = {**request.parameters, "project": project}
    budget_s = settings.cypher_timeout_s
    deadline = time.monotonic() + budget_s
    query_type, plan, columns = await adhoc.explain(session, request.query, parameters, budget_s)
    problems = query_problems(query_type, plan)
    if problems:
        raise QueryRefused(
            f"the query was refused: {problems[0]}"
            + (f" (and {len(problems) - 1} more reasons)" if len(problems) > 1 else ""),
            details=[{"loc": ["body", "query"], "msg": p} for p in problems],
        )
    if any(c.startswith(RESERVED) for c in columns):
        raise _refused(f"column names starting with {RESERVED} are the service's own")
    left_s = deadline - time.monotonic()
    if left_s <= 0.1:
        raise QueryFailed(
            f"planning the query took the whole time budget of {budget_s:g} s",
            details=[{"loc": ["body", "query"], "msg": "timed out"}],
        )
    limit = min(request.limit or settings.cypher_max_rows, settings.cypher_max_rows)
    budget = _Budget(limit, settings.cypher_max_bytes)
    if columns:
        truncated = await _run_bounded(
            session, request.query, parameters, columns, budget, settings, left_s
        )
    else:  # no column, no row (a query ending in FINISH): nothing to bound
        truncated = await adhoc.run_read(
            session, request.query, parameters, columns, budget.keep, left_s, budget_s
        )
    return CypherResult(
        columns=columns,
        rows=budget.rows,
        truncated=truncated,
        truncated_by=budget.stopped_by if truncated else None,
        row_limit=limit,
        byte_limit=settings.cypher_max_bytes,
        query_type=query_type or "r",
    )


async def _run_bounded(
    session: AsyncSession,
    text: str,
    parameters: dict[str, Any],
    columns: list[str],
    budget: _Budget,
    settings: Settings,
    left_s: float,
) -> bool:
    """Run ``text`` wrapped by ``service.adhoc.bound``; whether rows were left unread."""
    try:
        wrapped = bounded_query(text, columns)
    except UnboundableQuery as e:
        raise _refused(f"{e}; name every returned expression with AS") from e
    try:
        return await adhoc.run_read(
            session,
            wrapped,
            {**parameters, MAX_ROW_BYTES: settings.cypher_max_bytes},
            [*columns, ROW_BYTES],
            budget.keep_bounded,
            left_s,
            settings.cypher_timeout_s,
        )
    except QueryRefused as e:
        # The caller's own query planned; a syntax error now is in how its RETURN was named.
        if any(str(d.get("neo4j_code", "")).endswith("SyntaxError") for d in e.details or []):
            raise _refused(
                "its returned items could not be named to bound the answer's size; "
                "name every returned expression with AS"
            ) from e
        raise
