"""Reading a scope's source messages once for many cases (an attribution job).

The cases of one conversation share a scope (:mod:`service.attribution.scope`) and differ only in
the answer's time. So a job reads each named scope once without the time bound, and each case
keeps the messages recorded no later than its answer, in Python: exactly the rows, in the same
order, that ``attribution/scope_messages`` gives for that case, as long as the read is complete
(no more messages than the limit). When it is not, or the scope is unnamed (the neighbourhood of
one case's lineage, not shared by name), each case reads its own, bounded in Neo4j as before.

Why once per job and not once per case: a conversation's cases ask for the same messages, and a
job of hundreds of cases would read each conversation hundreds of times.

What it means for results: a job's cases see their scope's messages as they were when the job's
runner first needed them; a message recorded before an answer but sent to the
service while the job runs is seen by a later job or ``POST /attribute``, not by this job. Cases
are taken in id order, so one conversation's cases tend to come together: at most
:data:`SCOPES_KEPT` scopes and :data:`ROWS_KEPT` messages are kept, least recently used first out.

The repository decodes the messages (``rows.scope_message``), once per read: every case of the
scope gets the same immutable nodes, and its graph takes them without decoding a timestamp or an
attributes JSON again.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from dataclasses import dataclass, field, replace

from neo4j import AsyncSession

from service.attribution import scope_repository as attribution_scope
from service.attribution.graph import ScopeMessage, ScopeRead
from service.attribution.rows import nanoseconds
from service.attribution.scope import Scope

SCOPES_KEPT = 16
ROWS_KEPT = 100_000

ScopeKey = tuple[tuple[str, ...], tuple[tuple[str, str], ...], tuple[str, ...]]


@dataclass
class ScopeReads:
    """The complete message lists of the named scopes read so far (None: too many to keep)."""

    limit: int
    _read: OrderedDict[ScopeKey, list[ScopeMessage] | None] = field(default_factory=OrderedDict)
    _locks: dict[ScopeKey, asyncio.Lock] = field(default_factory=dict)

    async def messages(self, session: AsyncSession, project: str, scope: Scope) -> ScopeRead:
        """What ``attribution_scope.scope_messages`` answers for ``scope``: the same messages in
        the same order (latest first)."""
        if scope.unnamed:
            return await attribution_scope.scope_messages(session, project, scope, self.limit)
        key = (scope.systems, scope.attributes, scope.sessions)
        # cases in flight at once wait for one read of their scope rather than each reading it
        async with self._locks.setdefault(key, asyncio.Lock()):
            if key not in self._read:
                self._keep(key, await self._read_all(session, project, scope))
            self._read.move_to_end(key)
            complete = self._read[key]
        if complete is None:
            return await attribution_scope.scope_messages(session, project, scope, self.limit)
        # the query's time condition: unknown times count as in time
        until = nanoseconds(scope.until)
        if until is None:
            return ScopeRead(complete)
        return ScopeRead([m for m in complete if m.recorded is None or m.recorded <= until])

    async def _read_all(
        self, session: AsyncSession, project: str, scope: Scope
    ) -> list[ScopeMessage] | None:
        unbounded = replace(scope, until=None, lineage=())
        read = await attribution_scope.scope_messages(session, project, unbounded, self.limit)
        return None if read.cut else read.messages

    def _keep(self, key: ScopeKey, messages: list[ScopeMessage] | None) -> None:
        self._read[key] = messages
        while len(self._read) > SCOPES_KEPT or (
            len(self._read) > 1 and sum(len(r or ()) for r in self._read.values()) > ROWS_KEPT
        ):
            old, _ = self._read.popitem(last=False)
            self._locks.pop(old, None)
