"""Reading a scope's source messages once for many cases (an attribution job's chunk).

The cases of one conversation share a scope (:mod:`service.attribution.scope`) and differ only in
the answer's time. So a chunk reads each named scope once without the time bound, and each case
keeps the messages recorded no later than its answer, in Python: exactly the set
``attribution/scope_messages`` gives for that case, as long as the read is complete (no more
messages than the limit). When it is not, or the scope is the whole project (not shared by a
conversation's cases, and possibly far bigger than what one answer's time admits), each case
reads its own, bounded in Neo4j as before.

The rows are decoded once (``graph.prepared``), so a case's graph takes them without decoding a
timestamp or an attributes JSON again.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from neo4j import AsyncSession

from service.attribution.graph import prepared
from service.attribution.scope import Scope
from service.repository import attribution_scope

ScopeKey = tuple[tuple[str, ...], tuple[tuple[str, str], ...], tuple[str, ...]]


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_NS = timedelta(microseconds=1)


def _nanoseconds(value: Any) -> int | None:
    """An instant as nanoseconds since the epoch: ``[seconds, nanosecond, offset]`` as the scope
    query returns it, or a datetime. Integers compare exactly as Neo4j compares the instants
    (a datetime would drop the nanoseconds) and far faster than datetimes."""
    if value is None:
        return None
    if isinstance(value, list):
        return int(value[0]) * 1_000_000_000 + int(value[1])
    return ((value - _EPOCH) // _NS) * 1000  # type: ignore[no-any-return]


@dataclass
class ScopeReads:
    """The complete message lists of the named scopes read so far (None: too many to keep)."""

    limit: int
    _read: dict[ScopeKey, list[tuple[int | None, dict[str, Any]]] | None] = field(
        default_factory=dict
    )

    async def messages(
        self, session: AsyncSession, project: str, scope: Scope
    ) -> list[dict[str, Any]]:
        """What ``attribution_scope.scope_messages`` answers for ``scope``, the same rows in
        the same order (latest first)."""
        if scope.whole_project:
            return await attribution_scope.scope_messages(session, project, scope, self.limit)
        key = (scope.systems, scope.attributes, scope.sessions)
        if key not in self._read:
            unbounded = replace(scope, until=None, lineage=())
            rows = await attribution_scope.scope_messages(
                session, project, unbounded, self.limit + 1
            )
            self._read[key] = (
                [(_nanoseconds(r["ts"]), prepared(r)) for r in rows]
                if len(rows) <= self.limit
                else None
            )
        complete = self._read[key]
        if complete is None:
            return await attribution_scope.scope_messages(session, project, scope, self.limit)
        # the query's time condition: unknown times count as in time
        until = _nanoseconds(scope.until)
        if until is None:
            return [row for _, row in complete]
        return [row for when, row in complete if when is None or when <= until]
