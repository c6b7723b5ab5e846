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
from datetime import datetime
from typing import Any

from neo4j import AsyncSession

from service.attribution.graph import prepared
from service.attribution.scope import Scope
from service.repository import attribution_scope

ScopeKey = tuple[tuple[str, ...], tuple[tuple[str, str], ...], tuple[str, ...]]


def _in_time(row: dict[str, Any], until: datetime | None) -> bool:
    """The scope query's time condition: unknown times count as in time."""
    recorded = row["ts"]
    return until is None or recorded is None or recorded <= until


@dataclass
class ScopeReads:
    """The complete message lists of the named scopes read so far (None: too many to keep)."""

    limit: int
    _read: dict[ScopeKey, list[dict[str, Any]] | None] = field(default_factory=dict)

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
            self._read[key] = [prepared(r) for r in rows] if len(rows) <= self.limit else None
        complete = self._read[key]
        if complete is None:
            return await attribution_scope.scope_messages(session, project, scope, self.limit)
        return [row for row in complete if _in_time(row, scope.until)]
