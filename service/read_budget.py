"""The service's own heavy reads under a time budget (audits, reports) and a byte budget (a
case's ancestry), as ``POST /cypher``'s.

An audit reads as much of the project as its rows need, which the data decides (issue 21: one
memory entry of 9,997 versions once kept ``degraded_updates`` busy for 78 s), so each request
gets one budget for all its reads (``Deadline``), and each read runs the way
``service.adhoc.repository`` runs an ad-hoc query: an explicit transaction (never a managed
transaction function, which the driver would run again on a transient error, out of memory
included) with a server-side timeout of what is left of the budget, and a client-side deadline
a little later for a Neo4j that does not answer at all. The session must be a read-access one
(``service.dependencies.BoundedReadSessionDep``): Neo4j itself refuses writes in it.

An answer whose size the data decides (the rows of ``POST /cypher``, the nodes of a case's
ancestry, issue 33: 60 units of 1 MB made a 60 MB subgraph) is collected item by item under one
``ByteBudget``: an item that would pass it is left out, and the answer says it was cut. The big
values themselves are kept in Neo4j by each reader's statement (``service.adhoc.bound``, the
``$value_chars`` of ``cypher/cases/ancestors``), so the budget counts what did arrive.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from neo4j import AsyncSession, AsyncTransaction
from neo4j.exceptions import Neo4jError, ServiceUnavailable, SessionExpired

from service.db import OUT_OF_MEMORY, store_errors
from service.errors import QueryFailed, ReadTimedOut

T = TypeVar("T")

# Neo4j answers late by up to this much after its own transaction timeout fired.
CLIENT_GRACE_S = 2.0
# Codes (suffixes) of a transaction Neo4j stopped at its timeout.
TIMED_OUT = ("TransactionTimedOut", "TransactionTimedOutClientConfiguration")
# Neo4j reads a timeout of 0 as "none": a budget spent to less than this is spent.
_LEAST_S = 0.001


@dataclass(frozen=True)
class Deadline:
    """One request's time budget for its reads: ``budget_s`` from when it was made."""

    budget_s: float
    ends_at: float

    @classmethod
    def starting_now(cls, budget_s: float) -> Deadline:
        return cls(budget_s, time.monotonic() + budget_s)

    def left_s(self) -> float:
        """Seconds left of the budget (0 or less: spent)."""
        return self.ends_at - time.monotonic()


@store_errors
async def read_within(
    session: AsyncSession, deadline: Deadline, work: Callable[[AsyncTransaction], Awaitable[T]]
) -> T:
    """``work`` in one explicit read transaction stopped when ``deadline`` passes:
    ``ReadTimedOut`` then (a generic message; the caller names what ran), ``QueryFailed`` when
    Neo4j stopped it for its memory, ``StoreUnavailable`` when Neo4j is not reachable."""
    left_s = deadline.left_s()
    if left_s < _LEAST_S:
        raise _timed_out(deadline)

    async def in_transaction() -> T:
        async with await session.begin_transaction(timeout=left_s) as tx:
            return await work(tx)

    try:
        async with asyncio.timeout(left_s + CLIENT_GRACE_S):
            return await in_transaction()
    except TimeoutError as e:
        raise _timed_out(deadline) from e
    except (ServiceUnavailable, SessionExpired):
        raise  # the store is not reachable: store_errors makes it a 503
    except Neo4jError as e:
        code = e.code or ""
        if code.endswith(TIMED_OUT):
            raise _timed_out(deadline) from e
        if code.endswith(OUT_OF_MEMORY):
            raise QueryFailed(
                "the read needed more memory than Neo4j lets one transaction use and was stopped",
                details=[{"loc": [], "msg": "out of memory", "neo4j_code": code}],
            ) from e
        # A transient error (DatabaseUnavailable) is the store's: store_errors makes it a 503.
        # Anything else is a fault of the service's own statement.
        raise


def _timed_out(deadline: Deadline) -> ReadTimedOut:
    return ReadTimedOut(
        f"the read ran longer than its time budget of {deadline.budget_s:g} s and was stopped",
        details=[{"loc": [], "msg": "timed out"}],
    )


# What a page escapes in JSON it writes into a <script> block (service.ui.pages), each as the
# six characters of its \u escape instead of its own UTF-8 bytes.
_SCRIPT_ESCAPED = ("<", ">", "&", "\u2028", "\u2029")


def json_bytes(value: Any, in_page: bool = False) -> int:
    """The bytes of ``value`` as compact UTF-8 JSON (``json.dumps``' types only); ``in_page``:
    as a page's script block holds it, so that one count bounds an answer and its page."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    size = len(text.encode())
    if in_page:
        size += sum((6 - len(c.encode())) * text.count(c) for c in _SCRIPT_ESCAPED)
    return size


class ByteBudget:
    """The bytes of JSON one answer has taken so far, never past ``max_bytes``.

    An answer's list of items is counted as its items and one comma each (the list's brackets
    are in ``used`` from the start, with whatever else the answer holds)."""

    def __init__(self, max_bytes: int, used: int = 0) -> None:
        self.max_bytes, self.used = max_bytes, used

    def fits(self, size: int) -> bool:
        """Whether ``size`` more bytes stay within the budget."""
        return self.used + size <= self.max_bytes

    def take(self, size: int) -> bool:
        """Count ``size`` more bytes if they fit; whether they did."""
        if not self.fits(size):
            return False
        self.used += size
        return True
