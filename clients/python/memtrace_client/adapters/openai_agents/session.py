"""A traced Agents SDK ``Session``: what the agent stored, read back and deleted.

``TracedSession`` hands every call to the wrapped session (``SQLiteSession``, a Redis or SQL
session, any object with the ``Session`` protocol) and returns its result unchanged. Recorded:

- ``add_items``: ``agents.session.add_items`` (extraction: the memory of a turn is built here),
  consuming one ``message`` unit per item (``message_unit_id``: its role and text; the agent's
  replies, tool calls and tool results too, with the units the traced steps produced for them
  named in ``said_by``) and producing one ``memory`` unit per item the session holds
  afterwards. To know what it holds, the wrapper reads the last ``len(items)`` items back
  (``verify_writes``): an item the wrapped session dropped (a size cap, a filter) is not
  produced, and the attribution blames this write for losing it (ExtractionError).
- ``get_items``: ``agents.session.get_items`` (retrieval: a query naming the session and the
  ``limit``, and the items returned -> one ``context`` unit, a line ``role: text`` per item).
  Every model call of the run that follows consumes that context, so a fact stored but not
  read back (a ``limit``, ``SessionSettings(limit=...)``) is blamed on this read
  (RetrievalError), and a fact read back but answered wrongly on the model call (ResponseError).
- ``pop_item`` and ``clear_session``: ``agents.session.pop_item`` / ``agents.session.clear``
  (deletion: the items removed -> a tombstone each; ``clear_session`` first reads what it is
  about to remove). A fact deleted before the question is a DeletionError there.

Why a stored reply is a message and not the model call's answer unit itself: the attribution
takes the retrievals on an answer's lineage as reads made at question time. Were each stored
reply consumed as the call's output, every earlier turn's read, down to the first one of an empty
session, would be on the lineage of every later answer, and the question would seem asked before
most of the conversation was stored. The model call's own read of the history is its lineage.

An item's memory unit is named by the session and the item's key (its role and text), with no
time, so a read in another process names the unit the write produced; two identical items of one
session are one unit.
"""

from __future__ import annotations

from typing import Any

from agents.memory.session import Session
from agents.tracing import get_current_trace

from memtrace_client.adapters.answering import package_version
from memtrace_client.adapters.openai_agents.items import (
    PROMPT_ROLES,
    SYSTEM,
    Key,
    digest,
    item_key,
    memory_id_of,
    message_unit_id,
    render,
)
from memtrace_client.adapters.openai_agents.lineage import AgentsLineage, SessionRead, lineage_of
from memtrace_client.models import UnitIn, UnitKind
from memtrace_client.tracer import Tracer


def message_unit(tracer: Tracer, key: Key) -> UnitIn:
    """The unit of an item no traced step produced (the user's input), as both halves record
    it: the same id, text and attributes every time."""
    role, text = key
    kind: UnitKind = "prompt" if role in PROMPT_ROLES else "message"
    return tracer.unit(kind, text, id=message_unit_id(role, text), stamp=False, role=role)


class TracedSession:
    """A ``Session`` that records its calls with ``tracer``; every other attribute is the
    wrapped session's own."""

    def __init__(self, session: Session, tracer: Tracer, *, verify_writes: bool = True) -> None:
        self.session = session
        self.tracer = tracer
        self.verify_writes = verify_writes
        self.lineage: AgentsLineage = lineage_of(tracer)
        self.version = package_version("openai-agents")

    def __getattr__(self, name: str) -> Any:
        if name == "session":  # not set yet (during __init__): no recursion into itself
            raise AttributeError(name)
        return getattr(self.session, name)

    @property
    def session_id(self) -> str:
        return self.session.session_id

    @property
    def session_settings(self) -> Any:
        return self.session.session_settings

    # -- the session -----------------------------------------------------------------------------

    async def get_items(self, limit: int | None = None) -> list[Any]:
        items = await self.session.get_items(limit=limit)
        self._record_read(items, limit)
        return items

    async def add_items(self, items: list[Any]) -> None:
        await self.session.add_items(items)
        if not items:
            return
        keys = [item_key(i) for i in items]
        held = keys
        if self.verify_writes:
            tail = await self.session.get_items(limit=len(items))
            held = _found(keys, [item_key(i) for i in tail])
        said_by = [u for u in map(self.lineage.producer_of, keys) if u is not None]
        self.tracer.record_operation(
            "agents.session.add_items",
            kind="extraction",
            inputs=[message_unit(self.tracer, k) for k in keys],
            outputs=[self.memory_unit(k) for k in held],
            dropped=len(keys) - len(held),
            said_by=said_by,
            **self._common(),
        )

    async def pop_item(self) -> Any:
        item = await self.session.pop_item()
        if item is not None:
            self._record_deletion("agents.session.pop_item", [item_key(item)])
        return item

    async def clear_session(self) -> None:
        items = await self.session.get_items()
        await self.session.clear_session()
        self._record_deletion("agents.session.clear", [item_key(i) for i in items])

    # -- units -----------------------------------------------------------------------------------

    def memory_unit(self, key: Key) -> UnitIn:
        """The memory unit of an item this session stores (named by session and key)."""
        memory_id = memory_id_of(self.session_id, key)
        return self.tracer.unit(
            "memory",
            key[1],
            id=f"agents:session:{memory_id}",
            stamp=False,
            memory_id=memory_id,
            role=key[0],
            session=self.session_id,
        )

    def _common(self) -> dict[str, Any]:
        return {
            "system": self.tracer.system or SYSTEM,
            "session_id": self.session_id,
            "agents_version": self.version,
        }

    # -- recording -------------------------------------------------------------------------------

    def _record_read(self, items: list[Any], limit: int | None) -> None:
        keys = [item_key(i) for i in items]
        found = [self.memory_unit(k) for k in keys]
        asked = "all items" if limit is None else f"the last {limit} items"
        query = self.tracer.query(f"session {self.session_id}: {asked}")
        context = self.tracer.context("\n".join(render(k) for k in keys), session=self.session_id)
        self.tracer.record_operation(
            "agents.session.get_items",
            kind="retrieval",
            inputs=[query, *found],
            outputs=[context],
            limit=limit,
            returned=len(items),
            **self._common(),
        )
        trace = get_current_trace()
        read = SessionRead(context.id, self.session_id, frozenset(keys))
        self.lineage.read(read, trace.trace_id if trace is not None else None)

    def _record_deletion(self, name: str, keys: list[Key]) -> None:
        removed = [self.memory_unit(k) for k in keys]
        tombstones = [
            self.tracer.tombstone(
                u.attributes["memory_id"],
                id=f"agents:session:{u.attributes['memory_id']}:deleted:{digest(u.id)}",
                stamp=False,
            )
            for u in removed
        ]
        self.tracer.record_operation(
            name, kind="deletion", inputs=removed, outputs=tombstones, **self._common()
        )


def _found(written: list[Key], tail: list[Key]) -> list[Key]:
    """The written keys the tail read back holds (each tail item matches one write)."""
    left = list(tail)
    held = []
    for key in written:
        if key in left:
            left.remove(key)
            held.append(key)
    return held
