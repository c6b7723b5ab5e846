"""Trace a LangGraph store (package ``langgraph``): wrap any ``BaseStore``, keep its behaviour.

    from memtrace_client.adapters.langgraph import trace_store
    store = trace_store(InMemoryStore(index=...), MemTraceClient(url, project="my-agent"))
    graph = builder.compile(store=store)                   # nodes get the traced store
    with store.extracting(messages):                       # in the node that writes memories
        store.put(("memories", user), "job", {"fact": ...})

Every call reaches the wrapped store unchanged: ``TracedStore`` implements ``batch`` and
``abatch`` (what ``BaseStore``'s ``get``/``search``/``put``/``delete``/``list_namespaces`` and
their async forms all go through) by handing the same operations to the wrapped store and
returning its results as they are. Recorded, per operation of a batch:

- ``PutOp`` with a value (``store.put``): ``langgraph.put`` (update), consuming the entry's
  previous version and producing its next one. An entry is a namespace plus a key; its
  versions share ``memory_id`` (``"a/b#key"``) and a version's unit id is derived from that and
  the value (``langgraph:<memory_id>:<hash>``), with no time, so a later ``get`` or ``search``,
  even in another process, names the same unit. A put of the value already stored produces
  nothing (it changes nothing) and says ``unchanged: true``;
- ``PutOp`` with ``None`` (how ``store.delete`` deletes): ``langgraph.delete`` (deletion),
  consuming the version it removes and producing a tombstone;
- ``GetOp`` and ``SearchOp``: ``langgraph.get`` / ``langgraph.search`` (retrieval), consuming a
  query unit and the versions returned, producing one context unit of what was returned.
  ``ListNamespacesOp`` returns no memory and is not recorded.

A search consumes only the versions it returned, not the whole live store, as the RAG adapter's
vector search does: the lineage of an answer then holds what the answer could rest on, and a
fact the store held but the search missed is still found, because the attribution follows each
fact forward to question time on its own and blames the first retrieval whose output lacks it
(RetrievalError). Consuming the whole store would tie every answer to every memory.

To know the previous version of the entries a batch writes, the wrapper reads them first, in one
extra ``batch`` of ``GetOp(..., refresh_ttl=False)`` (a read that moves no TTL). The read and the
write are two calls, not one atomic step: two writers putting the same key at once (LangMem's
``invoke`` sends its puts from worker threads; a background reflection may write too) may both
name the same previous version, and the record then shows two next versions of one. The store's
own result is untouched; only the lineage of that entry forks.

Which messages led to a write: ``with store.extracting(messages):`` (or ``put(..., source=...)``)
records ``langgraph.extract`` (extraction), consuming the messages and producing one fact unit
per put in the block; each put then consumes its fact. A fact the extraction never put is then an
ExtractionError at ``langgraph.extract``, a put that overwrote an entry with a value lacking it
an UpdateError at that ``langgraph.put``, a deletion of its entry a DeletionError. Deletions in
the block consume its messages (why the entry went). Puts outside a block have no source.
A LangChain message with an ``id`` (as ``add_messages`` gives every message of a graph's state)
is one unit however often it is read, ``langgraph:message:<id>:<hash>``; other messages get a
new unit each time. A ``get`` or ``search`` inside the block is the extraction reading what the
store already holds (LangMem's manager does that): it is recorded as a retrieval, but it is not
one the next ``answer`` read. ``memtrace_client.adapters.langmem`` opens this block around
LangMem's memory manager.

``answer(...)`` records the answering step over the retrievals made since the last answer, and
``judge(...)`` the case, for ``POST /attribute/{case_id}``. Retrievals waiting for an answer are
kept on the store, so a graph's retrieve node and its answer node meet there; questions asked at
once on one store each take theirs in a ``with store.answering():`` block
(``memtrace_client.adapters.answering``).
"""

from __future__ import annotations

import contextvars
import json
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from langgraph.store.base import (
    NOT_PROVIDED,
    BaseStore,
    GetOp,
    Item,
    NotProvided,
    Op,
    PutOp,
    Result,
    SearchOp,
)

from memtrace_client.adapters.answering import (
    AnswersRetrievals,
    PendingRetrievals,
    as_tracer,
    package_version,
)
from memtrace_client.adapters.answering import Retrieval as Retrieval  # public, as before
from memtrace_client.adapters.answering import digest as _digest
from memtrace_client.client import MemTraceClient
from memtrace_client.models import UnitIn
from memtrace_client.tracer import Operation, Tracer

SYSTEM = "langgraph"

Entry = tuple[tuple[str, ...], str]
MessageLike = UnitIn | str | Mapping[str, Any] | Any
"""A source message: a recorded unit, a text, a ``{"role", "content"}`` dict or a LangChain
message (anything with ``content``, and ``type`` for its role)."""


CHAT_ROLE_TYPES = {"user": "human", "assistant": "ai"}
"""OpenAI-style roles of a message given as a dict, by the type LangChain gives the same message."""


@dataclass
class _Extraction:
    """An open ``extracting`` block: its operation and the messages it consumed."""

    op: Operation
    sources: list[UnitIn] = field(default_factory=list)


def memory_id_of(namespace: tuple[str, ...], key: str) -> str:
    """The ``memory_id`` shared by the versions of one entry (namespace labels hold no dot)."""
    return f"{'/'.join(namespace)}#{key}"


def value_text(value: Mapping[str, Any]) -> str:
    """A stored value as a version's text: its JSON, keys sorted, so one value has one text."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


def content_text(content: Any) -> str:
    """A message's content as text: a string as it is, the text parts of a list of content
    blocks (LangChain's multimodal form) joined by newlines."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = (p if isinstance(p, str) else p.get("text") for p in content if p)
        return "\n".join(p for p in parts if isinstance(p, str))
    return "" if content is None else str(content)


def langgraph_version() -> str:
    return package_version("langgraph")


class TracedStore(AnswersRetrievals, BaseStore):
    """A ``BaseStore`` that hands every operation to ``store`` and records it with ``tracer``.
    Any other attribute is the wrapped store's own. ``answer`` and ``judge``:
    :class:`~memtrace_client.adapters.answering.AnswersRetrievals`."""

    system = SYSTEM

    def __init__(self, store: BaseStore, tracer: Tracer) -> None:
        self.store = store
        self.tracer = tracer
        self.version = langgraph_version()
        # TTL support is the wrapped store's: BaseStore.put checks these on self.
        self.supports_ttl = store.supports_ttl
        self.ttl_config = store.ttl_config
        self._extraction: contextvars.ContextVar[_Extraction | None] = contextvars.ContextVar(
            f"memtrace_langgraph_extraction_{id(self)}", default=None
        )
        self._pending = PendingRetrievals(f"memtrace_langgraph_pending_{id(self)}")

    def __getattr__(self, name: str) -> Any:
        if name == "store":  # not set yet (during __init__): no recursion into itself
            raise AttributeError(name)
        return getattr(self.store, name)

    # -- the store -------------------------------------------------------------------------------

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        ops = list(ops)
        before = self._previous(self.store.batch(self._reads_before(ops)), ops)
        results = self.store.batch(ops)
        self._record(ops, results, before)
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        ops = list(ops)
        before = self._previous(await self.store.abatch(self._reads_before(ops)), ops)
        results = await self.store.abatch(ops)
        self._record(ops, results, before)
        return results

    def put(
        self,
        namespace: tuple[str, ...],
        key: str,
        value: Mapping[str, Any],
        index: Any = None,
        *,
        ttl: float | NotProvided | None = NOT_PROVIDED,
        source: Iterable[MessageLike] | None = None,
    ) -> None:
        """``BaseStore.put``; ``source``: the messages this value was extracted from."""
        if source is None:
            return super().put(namespace, key, value, index, ttl=ttl)
        with self.extracting(source):
            return super().put(namespace, key, value, index, ttl=ttl)

    async def aput(
        self,
        namespace: tuple[str, ...],
        key: str,
        value: Mapping[str, Any],
        index: Any = None,
        *,
        ttl: float | NotProvided | None = NOT_PROVIDED,
        source: Iterable[MessageLike] | None = None,
    ) -> None:
        """``BaseStore.aput``; ``source``: the messages this value was extracted from."""
        if source is None:
            return await super().aput(namespace, key, value, index, ttl=ttl)
        with self.extracting(source):
            return await super().aput(namespace, key, value, index, ttl=ttl)

    @staticmethod
    def _reads_before(ops: list[Op]) -> list[Op]:
        """A read of each entry the batch writes, to know the version it replaces."""
        written = dict.fromkeys((op.namespace, op.key) for op in ops if isinstance(op, PutOp))
        return [GetOp(namespace, key, refresh_ttl=False) for namespace, key in written]

    @staticmethod
    def _previous(found: list[Result], ops: list[Op]) -> dict[Entry, Mapping[str, Any] | None]:
        written = dict.fromkeys((op.namespace, op.key) for op in ops if isinstance(op, PutOp))
        return {
            entry: item.value if isinstance(item, Item) else None
            for entry, item in zip(written, found, strict=True)
        }

    # -- sources ---------------------------------------------------------------------------------

    @contextmanager
    def extracting(
        self, messages: Iterable[MessageLike], *, name: str = "langgraph.extract", **attributes: Any
    ) -> Iterator[Operation]:
        """Record the block as one extraction consuming ``messages``; every put in it produces a
        fact of that extraction (even none: an extraction that kept nothing is recorded too)."""
        sources = [self.message_unit(m) for m in messages]
        with self.tracer.operation(
            name, kind="extraction", inputs=sources, system=SYSTEM, **self._common(), **attributes
        ) as op:
            token = self._extraction.set(_Extraction(op, sources))
            try:
                yield op
            finally:
                self._extraction.reset(token)

    def message_unit(self, message: MessageLike) -> UnitIn:
        """A source message's unit, as ``extracting`` records it: as given, or recorded from its
        text, role and ``id`` (the same unit each time for a message with an ``id``, e.g. to
        name a case's evidence)."""
        if isinstance(message, UnitIn):
            return message
        if isinstance(message, str):
            return self.tracer.message(message)
        if isinstance(message, Mapping):
            role = message.get("role") or message.get("type")
            # LangChain's name for the role, as a message object (and so LangMem, which converts
            # the dicts it is given) carries it: one message is one unit however it is passed
            role = CHAT_ROLE_TYPES.get(role, role) if isinstance(role, str) else role
            content, message_id = message.get("content"), message.get("id")
        else:
            role = getattr(message, "type", None)
            content = getattr(message, "content", message)
            message_id = getattr(message, "id", None)
        text = content_text(content)
        if not message_id:
            return self.tracer.message(text, role=role)
        # One message read by several extractions is one unit: its id is the message's own.
        digest = _digest(f"{role}:{self.tracer.mask(text)}")
        unit_id = f"langgraph:message:{message_id}:{digest}"
        return self.tracer.message(text, role=role, id=unit_id, stamp=False)

    # -- recording -------------------------------------------------------------------------------

    def _common(self) -> dict[str, Any]:
        return {"langgraph_version": self.version}

    def _version(self, namespace: tuple[str, ...], key: str, value: Mapping[str, Any]) -> UnitIn:
        """One version of an entry, named by entry and value (no time: see the module doc)."""
        memory_id = memory_id_of(namespace, key)
        text = value_text(value)
        return self.tracer.unit(
            "memory",
            text,
            id=f"langgraph:{memory_id}:{_digest(text)}",
            stamp=False,
            memory_id=memory_id,
            namespace=list(namespace),
            key=key,
        )

    def _record(
        self, ops: list[Op], results: list[Result], before: dict[Entry, Mapping[str, Any] | None]
    ) -> None:
        current = dict(before)
        for op, result in zip(ops, results, strict=True):
            if isinstance(op, PutOp):
                entry = (op.namespace, op.key)
                self._record_write(op, current.get(entry))
                current[entry] = op.value
            elif isinstance(op, GetOp):
                found = [result] if isinstance(result, Item) else []
                query = f"get {memory_id_of(op.namespace, op.key)}"
                self._record_read("langgraph.get", query, found, namespace=list(op.namespace))
            elif isinstance(op, SearchOp):
                items = [r for r in result or [] if isinstance(r, Item)]  # type: ignore[union-attr]
                query = op.query or f"search {'/'.join(op.namespace_prefix)}"
                self._record_read(
                    "langgraph.search",
                    query,
                    items,
                    namespace_prefix=list(op.namespace_prefix),
                    filter=op.filter,
                    limit=op.limit,
                    offset=op.offset,
                    scores=[getattr(r, "score", None) for r in items],
                )

    def _record_write(self, op: PutOp, previous: Mapping[str, Any] | None) -> None:
        extraction = self._extraction.get()
        memory_id = memory_id_of(op.namespace, op.key)
        old = [self._version(op.namespace, op.key, previous)] if previous is not None else []
        common = {"memory_id": memory_id, "system": SYSTEM, **self._common()}
        if op.value is None:
            sources = extraction.sources if extraction else []
            tombstone = [
                self.tracer.tombstone(
                    memory_id, id=f"langgraph:{memory_id}:deleted:{old[0].id}", stamp=False
                )
                for _ in old
            ]
            self.tracer.record_operation(
                "langgraph.delete",
                kind="deletion",
                inputs=[*sources, *old],
                outputs=tombstone,
                **common,
            )
            return
        facts: list[UnitIn] = []
        if extraction is not None:
            fact = self.tracer.memory(value_text(op.value), role="extracted_fact")
            extraction.op.output(fact)
            facts.append(fact)
        new = self._version(op.namespace, op.key, op.value)
        unchanged = bool(old) and old[0].id == new.id
        self.tracer.record_operation(
            "langgraph.put",
            kind="update",
            inputs=[*facts, *old],
            outputs=[] if unchanged else [new],
            unchanged=unchanged,
            **common,
        )

    def _record_read(self, name: str, query: str, items: list[Item], **attributes: Any) -> None:
        question = self.tracer.query(query)
        found = [self._version(i.namespace, i.key, i.value) for i in items]
        context = self.tracer.context("\n".join(u.content for u in found))
        extraction = self._extraction.get()
        if extraction is not None:  # the extraction reading the store, not an answer's search
            attributes["extraction"] = extraction.op.id
        self.tracer.record_operation(
            name,
            kind="retrieval",
            inputs=[question, *found],
            outputs=[context],
            system=SYSTEM,
            **self._common(),
            **attributes,
        )
        if extraction is None:
            self._pending.add(question, context)


def trace_store(
    store: BaseStore, client: MemTraceClient | Tracer, *, spool_dir: str | None = None
) -> TracedStore:
    """Wrap ``store`` (any LangGraph ``BaseStore``) so that its operations go to MemTrace."""
    return TracedStore(store, as_tracer(client, spool_dir))
