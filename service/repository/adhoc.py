"""Running a caller's own Cypher (``POST /cypher``): plan it, then run it, both read-only.

This is the one place where Cypher that is not in ``cypher/`` reaches Neo4j, on purpose: the
text comes from the caller. ``service.cypher_guard`` decides from the plan whether it may run;
both steps use read-access transactions with the configured timeout.
"""

from __future__ import annotations

from typing import Any

from neo4j import AsyncManagedTransaction, AsyncSession, unit_of_work
from neo4j.exceptions import ClientError

from service.db import store_errors
from service.errors import InvalidInput, QueryRefused

_TIMED_OUT = ("TransactionTimedOut", "TransactionTimedOutClientConfiguration")


@store_errors
async def explain(
    session: AsyncSession, text: str, parameters: dict[str, Any], timeout_s: float
) -> tuple[str | None, dict[str, Any] | None]:
    """Neo4j's query type (``r``, ``rw``, ``w``, ``s``) and plan, without running anything."""

    @unit_of_work(timeout=timeout_s)
    async def work(tx: AsyncManagedTransaction) -> tuple[str | None, dict[str, Any] | None]:
        result = await tx.run("EXPLAIN " + text, parameters)
        summary = await result.consume()
        return summary.query_type, summary.plan

    try:
        return await session.execute_read(work)
    except ClientError as e:
        raise _client_error(e, timeout_s) from e


@store_errors
async def run_read(
    session: AsyncSession,
    text: str,
    parameters: dict[str, Any],
    timeout_s: float,
    max_rows: int,
) -> tuple[list[str], list[list[Any]], bool]:
    """Columns, at most ``max_rows`` rows of raw values, and whether more rows were left."""

    @unit_of_work(timeout=timeout_s)
    async def work(tx: AsyncManagedTransaction) -> tuple[list[str], list[list[Any]], bool]:
        result = await tx.run(text, parameters)
        columns = list(result.keys())
        records = await result.fetch(max_rows + 1)
        rows = [list(r.values()) for r in records[:max_rows]]
        return columns, rows, len(records) > max_rows

    try:
        return await session.execute_read(work)
    except ClientError as e:
        raise _client_error(e, timeout_s) from e


def _client_error(e: ClientError, timeout_s: float) -> Exception:
    """Neo4j's verdict on the caller's query, as a 4xx that says what Neo4j said."""
    code = e.code or ""
    if any(code.endswith(t) for t in _TIMED_OUT):
        return InvalidInput(
            f"the query ran longer than {timeout_s:g} s and was stopped",
            details=[{"loc": ["body", "query"], "msg": "timed out"}],
        )
    if ".Statement." in code or ".Procedure." in code:
        message = (e.message or "").split("\n", 1)[0][:500]
        return QueryRefused(
            f"Neo4j refused the query: {message}",
            details=[{"loc": ["body", "query"], "msg": message, "neo4j_code": code}],
        )
    return QueryRefused(
        "Neo4j refused the query", details=[{"loc": ["body", "query"], "neo4j_code": code}]
    )
