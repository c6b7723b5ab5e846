"""Running a caller's own Cypher (``POST /cypher``): plan it, then run it, both read-only.

This is the one place where Cypher that is not in ``cypher/`` reaches Neo4j, on purpose: the
text comes from the caller. ``service.adhoc.guard`` decides from the plan whether it may run.

Both steps run in an explicit transaction of a read-access session, never in a managed
transaction function: the driver retries those on transient errors, and "out of memory" is a
transient error, so a harmful query would run again (issue 9 saw it run three times). Both
have a server-side transaction timeout (which also stops planning) and a client-side deadline
a little later, for a Neo4j that does not answer at all; rows are read in small batches and
reading stops as soon as the caller's ``keep`` says the budget is spent.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from neo4j import AsyncSession
from neo4j.exceptions import Neo4jError, ServiceUnavailable, SessionExpired, TransientError

from service.db import OUT_OF_MEMORY, store_errors
from service.errors import QueryFailed, QueryRefused
from service.read_budget import CLIENT_GRACE_S, TIMED_OUT

T = TypeVar("T")


@store_errors
async def explain(
    session: AsyncSession, text: str, parameters: dict[str, Any], timeout_s: float
) -> tuple[str | None, dict[str, Any] | None, list[str]]:
    """Neo4j's query type (``r``, ``rw``, ``w``, ``s``), plan and columns, without running
    anything."""

    async def work() -> tuple[str | None, dict[str, Any] | None, list[str]]:
        async with await session.begin_transaction(timeout=timeout_s) as tx:
            result = await tx.run("EXPLAIN " + text, parameters)
            columns = list(result.keys())
            summary = await result.consume()
            return summary.query_type, summary.plan, columns

    return await _bounded(work(), timeout_s, timeout_s)


@store_errors
async def run_read(
    session: AsyncSession,
    text: str,
    parameters: dict[str, Any],
    columns: list[str],
    keep: Callable[[list[Any]], bool],
    timeout_s: float,
    budget_s: float,
) -> bool:
    """Run the query and hand each row (raw values) to ``keep`` until it returns False;
    ``timeout_s`` is what is left of the whole time budget ``budget_s`` after planning.

    The query must return exactly ``columns``, in order: otherwise it is refused before a row
    is read. Returns whether rows were left unread. The transaction is rolled back either way
    (it only read), which also drops the rows Neo4j had not sent yet.
    """

    async def work() -> bool:
        async with await session.begin_transaction(timeout=timeout_s) as tx:
            result = await tx.run(text, parameters)
            if list(result.keys()) != columns:
                raise QueryRefused(
                    "the query returned other columns than planned",
                    details=[{"loc": ["body", "query"], "msg": f"columns {list(result.keys())}"}],
                )
            async for record in result:
                if not keep(list(record.values())):
                    return True
            return False

    return await _bounded(work(), timeout_s, budget_s)


async def _bounded(work: Coroutine[Any, Any, T], timeout_s: float, budget_s: float) -> T:
    try:
        async with asyncio.timeout(timeout_s + CLIENT_GRACE_S):
            return await work
    except TimeoutError as e:
        raise _timed_out(budget_s) from e
    except (ServiceUnavailable, SessionExpired):
        raise  # the store is not reachable: store_errors makes it a 503
    except Neo4jError as e:
        if isinstance(e, TransientError) and not (e.code or "").endswith(OUT_OF_MEMORY):
            raise  # e.g. DatabaseUnavailable: the store, not the query (a 503)
        raise _query_error(e, budget_s) from e


def _timed_out(timeout_s: float) -> QueryFailed:
    return QueryFailed(
        f"the query (planning included) ran longer than {timeout_s:g} s and was stopped",
        details=[{"loc": ["body", "query"], "msg": "timed out"}],
    )


def _query_error(e: Neo4jError, timeout_s: float) -> Exception:
    """Neo4j's verdict on the caller's query as a 4xx saying what Neo4j said: a failing query
    is never "the store is unavailable" (a 503 would invite the client to send it again)."""
    code = e.code or ""
    message = (e.message or "").split("\n", 1)[0][:500]
    details = [{"loc": ["body", "query"], "msg": message, "neo4j_code": code}]
    if code.endswith(TIMED_OUT):
        return _timed_out(timeout_s)
    if code.endswith(OUT_OF_MEMORY):
        return QueryFailed(
            "the query needed more memory than one query may use and was stopped", details=details
        )
    if ".Statement." in code or ".Procedure." in code or code.startswith("Neo.ClientError."):
        return QueryRefused(f"Neo4j refused the query: {message}", details=details)
    return QueryFailed(f"the query failed in Neo4j: {message}", details=details)
