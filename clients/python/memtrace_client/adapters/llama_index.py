"""Trace a LlamaIndex ``Memory`` (package ``llama-index-core``) and its memory blocks.

    from llama_index.core.memory import Memory
    from memtrace_client.adapters.llama_index import trace_memory
    memory = trace_memory(Memory.from_defaults(memory_blocks=[...]), MemTraceClient(url, project=p))
    memory.put(ChatMessage(role="user", content="I moved to Lisbon"))      # as before
    messages = memory.get(input=question)                                   # as before
    answer = memory.answer(str(llm.chat(messages).message.content))
    memory.judge(question, expected, answer)

What is recorded (``system`` ``llama_index``, ``session_id`` the memory's):

- every message put (``put``, ``put_messages``, ``set``) as a ``message`` unit;
- ``llama_index.flush`` (update): the short-term FIFO queue handing its oldest messages to the
  blocks; it consumes those messages and produces one unit (``other``, ``role: flushed_batch``)
  holding their text, which every block's work on them consumes. With no block that keeps what
  it is handed (none accepts short-term memory, or only static blocks), the flush is a
  ``deletion``: the messages left the memory for nowhere;
- ``FactExtractionMemoryBlock``: ``llama_index.extract_facts`` (extraction, with the block's
  extraction template as prompt ``llama_index-fact-extraction``): the batch -> one unit per fact
  the LLM's reply holds, parsed by the block's own parser; ``llama_index.store_facts`` (update):
  those facts and the block's fact list -> the list's next version (one memory entry per block,
  ``memory_id`` ``<session>:<block name>``, its text what the block puts into the context);
  ``llama_index.condense_facts`` (update, prompt ``llama_index-fact-condense``) when the list
  grew past ``max_facts`` and the block asked the LLM to condense it: the list -> the condensed
  version that replaced it;
- ``VectorMemoryBlock``: ``llama_index.vector_insert`` (update): the batch -> the node the block
  embedded and inserted (``memory_id`` ``<block name>:<hash of its text>``);
- ``get``: one retrieval per block that returned content, ``llama_index.get:<block name>``,
  consuming the query (``get``'s ``input``, else the last user message; for a vector block the text
  it searched with) and the recorded memories its content holds (the fact list's current version;
  the inserted nodes whose text it contains), producing a context unit with the text that reached
  the context after ``Memory``'s truncation (empty, ``truncated: "dropped"``, when truncation
  removed the block); ``llama_index.get:chat_history`` for the short-term messages ``get`` returns;
- ``reset`` as ``llama_index.reset`` (deletion) consuming the messages still in the short-term
  queue; ``set`` likewise (``llama_index.set``) for the ones it replaces.

``answer(...)`` records the answering step over the last ``get``'s retrievals (response) and
``judge(...)`` the case. No block of ``llama-index-core`` deletes what it holds: a
``DeletionError`` can only be a ``reset``/``set`` of the short-term queue (or a flush to nowhere).

Why a ``Memory`` subclass with proxy blocks: agents, chat engines and workflows take a
``BaseMemory`` (so a plain wrapper would be refused), and the sync methods all run the async
ones, which the subclass overrides. ``Memory`` talks to a block only through ``aput``, ``aget``
and ``atruncate``, so each block is wrapped in a :class:`TracedBlock` that sees exactly the batch
a flush hands that block and the content it returns, for any block type; what a block did inside
(the LLM calls of fact extraction, the text a vector block embedded) is read from LlamaIndex's
own instrumentation events (``LLMChatEndEvent``, ``EmbeddingEndEvent``), attributed to the block
whose call made them by a context variable, since ``Memory`` runs the blocks' puts concurrently.
The truncated content comes from two private steps of ``Memory.aget``
(``_get_memory_blocks_content``, ``_truncate_memory_blocks``): tested on 0.14.25 only.

Not recorded: blocks of other types (their puts; their ``get`` is a retrieval consuming only the
query), non-text content (images, audio), messages already in the chat store when the memory was
wrapped until a flush or ``get`` meets them (then recorded as they are met), a vector store's
nodes inserted by another process (a retrieval of them has no memory input), and node
postprocessors' own work (only the block's final text is seen).
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from llama_index.core.base.llms.types import ChatMessage, TextBlock
from llama_index.core.bridge.pydantic import PrivateAttr
from llama_index.core.instrumentation import get_dispatcher  # type: ignore[attr-defined]
from llama_index.core.instrumentation.event_handlers import BaseEventHandler
from llama_index.core.instrumentation.events import BaseEvent
from llama_index.core.instrumentation.events.embedding import EmbeddingEndEvent
from llama_index.core.instrumentation.events.llm import LLMChatEndEvent
from llama_index.core.memory import Memory
from llama_index.core.memory.memory import BaseMemoryBlock
from llama_index.core.memory.memory_blocks import (
    FactExtractionMemoryBlock,
    StaticMemoryBlock,
    VectorMemoryBlock,
)

from memtrace_client.adapters.answering import (
    AnswersRetrievals,
    PendingRetrievals,
    Retrieval,
    as_tracer,
    digest,
    package_version,
)
from memtrace_client.client import MemTraceClient
from memtrace_client.models import UnitIn, Verdict
from memtrace_client.prompts import PromptLike
from memtrace_client.tracer import Tracer, UnitLike

SYSTEM = "llama_index"
FLUSH = "llama_index.flush"
EXTRACT = "llama_index.extract_facts"
STORE = "llama_index.store_facts"
CONDENSE = "llama_index.condense_facts"
INSERT = "llama_index.vector_insert"
RESET = "llama_index.reset"
SET = "llama_index.set"
GET = "llama_index.get:"
CHAT_HISTORY = "chat_history"
EXTRACTION_PROMPT = "llama_index-fact-extraction"
CONDENSE_PROMPT = "llama_index-fact-condense"


def llama_index_version() -> str:
    return package_version("llama-index-core")


# -- what a block's own calls did, from LlamaIndex's instrumentation -------------------------------


@dataclass
class _Calls:
    """The LLM replies and embedded texts of one block call, in order."""

    replies: list[str] = field(default_factory=list)
    embedded: list[str] = field(default_factory=list)


_calls: contextvars.ContextVar[_Calls | None] = contextvars.ContextVar(
    "memtrace_llama_index_calls", default=None
)


class _CallListener(BaseEventHandler):
    """On the root dispatcher: every chat reply and embedding made inside a traced block call
    goes to that call's :class:`_Calls` (none outside one: then it returns at once)."""

    @classmethod
    def class_name(cls) -> str:
        return "MemTraceBlockCalls"

    def handle(self, event: BaseEvent, **kwargs: Any) -> None:
        calls = _calls.get()
        if calls is None:
            return
        if isinstance(event, LLMChatEndEvent) and event.response is not None:
            calls.replies.append(str(event.response.message.content or ""))
        elif isinstance(event, EmbeddingEndEvent):
            calls.embedded.extend(event.chunks)


_listening = threading.Lock()
_listener: _CallListener | None = None


def _listen() -> None:
    global _listener
    with _listening:
        if _listener is None:
            _listener = _CallListener()
            get_dispatcher().add_event_handler(_listener)


# -- what one get() saw, from the memory's own steps -----------------------------------------------


@dataclass
class _GetCapture:
    chat_history: list[ChatMessage] = field(default_factory=list)
    input: str | None = None
    calls: dict[str, _Calls] = field(default_factory=dict)  # block name -> its get's calls
    raw: dict[str, Any] = field(default_factory=dict)  # block name -> content it returned
    final: dict[str, Any] | None = None  # after truncation


_get: contextvars.ContextVar[_GetCapture | None] = contextvars.ContextVar(
    "memtrace_llama_index_get", default=None
)


def _text(message: ChatMessage) -> str:
    return "".join(b.text for b in message.blocks if isinstance(b, TextBlock))


def _role(message: ChatMessage) -> str:
    return str(getattr(message.role, "value", message.role))


def _transcript(messages: Iterable[ChatMessage]) -> str:
    return "\n".join(f"{_role(m)}: {_text(m)}" for m in messages)


def _content_text(content: Any) -> str:
    """The text a block's content puts into the context (text blocks and messages)."""
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for item in content or ():
        if isinstance(item, ChatMessage):
            parts.append(_text(item))
        elif isinstance(item, TextBlock):
            parts.append(item.text)
    return "\n".join(parts)


def _template_text(template: Any) -> str:
    return str(getattr(template, "template_str", None) or getattr(template, "template", ""))


def _facts_text(facts: Iterable[str]) -> str:
    """The fact list as the block puts it into the context."""
    return "\n".join(f"<fact>{fact}</fact>" for fact in facts)


class MemoryRecorder(AnswersRetrievals):
    """What :class:`TracedMemory` and its :class:`TracedBlock` s record, kept apart from the
    pydantic models: the messages in the short-term queue, the flushes under way, each fact
    block's current list version and each vector block's inserted nodes."""

    system = SYSTEM

    def __init__(self, tracer: Tracer, session_id: str) -> None:
        self.tracer = tracer
        self.session_id = session_id
        self.version = llama_index_version()
        self._pending = PendingRetrievals(f"memtrace_llama_index_{id(self)}")
        self._lock = threading.RLock()
        self._active: list[tuple[str, str, UnitIn]] = []  # (role, text, unit), oldest first
        self.messages: list[UnitIn] = []  # every message unit recorded, oldest first
        self._batches: dict[int, tuple[list[ChatMessage], UnitIn]] = {}
        self._facts: dict[str, UnitIn] = {}  # fact block name -> its list's current version
        self._nodes: dict[str, dict[str, UnitIn]] = {}  # vector block name -> text -> node
        self._last = datetime.now(UTC)
        self.blocks: list[BaseMemoryBlock[Any]] = []  # the memory's own blocks (unwrapped)

    # -- records ---------------------------------------------------------------------------------

    def _tick(self) -> datetime:
        """Strictly increasing times, so the operations sort in the order they happened."""
        with self._lock:
            self._last = max(datetime.now(UTC), self._last + timedelta(microseconds=1))
            return self._last

    def _op(self, name: str, kind: Any, **kw: Any) -> str:
        return self.tracer.record_operation(
            name,
            kind=kind,
            ts=self._tick(),
            system=SYSTEM,
            session_id=self.session_id,
            llama_index_version=self.version,
            **kw,
        )

    # -- the short-term queue --------------------------------------------------------------------

    def put(self, messages: Iterable[ChatMessage]) -> None:
        """Messages entering the short-term queue: one unit each."""
        with self._lock:
            for m in messages:
                unit = self.tracer.message(_text(m), role=_role(m))
                self._active.append((_role(m), _text(m), unit))
                self.messages.append(unit)

    def _unit_of(self, message: ChatMessage, *, leaving: bool) -> UnitIn:
        """The unit of a message in the queue, the oldest of that role and text (the queue is
        FIFO); one met for the first time (in the store before it was wrapped) is recorded."""
        role, text = _role(message), _text(message)
        with self._lock:
            for i, (r, t, unit) in enumerate(self._active):
                if r == role and t == text:
                    if leaving:
                        del self._active[i]
                    return unit
            unit = self.tracer.message(text, role=role, met_at="flush" if leaving else "get")
            self.messages.append(unit)
            if not leaving:
                self._active.append((role, text, unit))
            return unit

    def flushed(self, messages: list[ChatMessage], keeps: bool) -> UnitIn:
        """The batch unit of one flush, recorded when the first block is handed it (every block
        is handed the same list). ``keeps``: some block keeps what it is handed."""
        with self._lock:
            known = self._batches.get(id(messages))
            if known is not None and known[0] is messages:
                return known[1]
            units = [self._unit_of(m, leaving=True) for m in messages]
            batch = self.tracer.unit("other", _transcript(messages), role="flushed_batch")
            self._batches[id(messages)] = (messages, batch)
        self._op(
            FLUSH,
            "update" if keeps else "deletion",
            inputs=units,
            outputs=[batch] if keeps else [],
            messages=len(units),
        )
        return batch

    def flushes_done(self) -> None:
        with self._lock:
            self._batches.clear()

    def dropped(self, name: str) -> None:
        """``reset``/``set``: the messages still in the short-term queue are gone."""
        with self._lock:
            units = [unit for _, _, unit in self._active]
            self._active.clear()
        if units:
            self._op(name, "deletion", inputs=units, messages=len(units))

    # -- what a block did with a batch -----------------------------------------------------------

    def block_put(
        self, block: BaseMemoryBlock[Any], batch: UnitIn, calls: _Calls, facts_before: list[str]
    ) -> None:
        if isinstance(block, FactExtractionMemoryBlock):
            self._facts_put(block, batch, calls, facts_before)
        elif isinstance(block, VectorMemoryBlock):
            self._vector_put(block, batch, calls)

    def _facts_version(self, block: FactExtractionMemoryBlock, facts: list[str]) -> UnitIn:
        unit = self.tracer.memory(
            _facts_text(facts), memory_id=f"{self.session_id}:{block.name}", block=block.name
        )
        self._facts[block.name] = unit
        return unit

    def _facts_put(
        self, block: FactExtractionMemoryBlock, batch: UnitIn, calls: _Calls, before: list[str]
    ) -> None:
        name = block.name
        previous = self._facts.get(name)
        if previous is None and before:  # facts the block held before it was traced
            previous = self._facts_version(block, before)
        if calls.replies:
            parsed = block._parse_facts_xml(calls.replies[0])
        else:  # an LLM that sends no instrumentation events: what was appended
            parsed = [f for f in block.facts if f not in before]
        facts = [self.tracer.memory(f, role="extracted_fact", block=name) for f in parsed]
        self._op(
            EXTRACT,
            "extraction",
            inputs=[batch],
            outputs=facts,
            prompt=(EXTRACTION_PROMPT, _template_text(block.fact_extraction_prompt_template)),
            block=name,
            model=str(getattr(block.llm.metadata, "model_name", type(block.llm).__name__)),
        )
        appended = list(before)
        for fact in parsed:
            if fact not in appended:
                appended.append(fact)
        stored = self._facts_version(block, appended)
        inputs = [*facts, *([previous] if previous is not None else [])]
        self._op(STORE, "update", inputs=inputs, outputs=[stored], block=name, facts=len(appended))
        if len(calls.replies) > 1 and len(appended) > block.max_facts:
            condensed = self._facts_version(block, list(block.facts))
            self._op(
                CONDENSE,
                "update",
                inputs=[stored],
                outputs=[condensed],
                prompt=(CONDENSE_PROMPT, _template_text(block.fact_condense_prompt_template)),
                block=name,
                max_facts=block.max_facts,
                applied=list(block.facts) != appended,
            )

    def _vector_put(self, block: VectorMemoryBlock, batch: UnitIn, calls: _Calls) -> None:
        nodes = []
        for text in calls.embedded:  # the node's text, as the block embedded and inserted it
            node = self.tracer.memory(
                text, memory_id=f"{block.name}:{digest(text)}", block=block.name
            )
            self._nodes.setdefault(block.name, {})[text] = node
            nodes.append(node)
        if nodes:
            self._op(INSERT, "update", inputs=[batch], outputs=nodes, block=block.name)

    # -- get -------------------------------------------------------------------------------------

    def got(self, capture: _GetCapture, blocks: list[BaseMemoryBlock[Any]]) -> None:
        """One ``get``: a retrieval per block that returned content, and the chat history.

        Recorded in this order: the blocks whose content came from recorded memories (in the
        order ``Memory`` asked them), then the other blocks, then the chat history. Why: where
        the store held the information and the context lacked it, attribution blames the first
        retrieval of the answer's lineage that lacked it, and only a block that reads the store
        could have put it there (a static block or the short-term queue could not)."""
        said = capture.input
        if said is None:
            said = next(
                (_text(m) for m in reversed(capture.chat_history) if _role(m) == "user"), ""
            )
        query = self.tracer.query(said)
        final = capture.final if capture.final is not None else capture.raw
        readers: list[tuple[BaseMemoryBlock[Any], list[UnitIn]]] = []
        others: list[tuple[BaseMemoryBlock[Any], list[UnitIn]]] = []
        for block in sorted(blocks, key=lambda b: -b.priority):  # Memory's own order
            if block.name not in capture.raw:
                continue
            read = self._read_by(block, _content_text(capture.raw[block.name]))
            (readers if read else others).append((block, read))
        for block, read in readers + others:
            self._block_got(block, read, query, capture, final)
        if capture.chat_history:
            messages = [self._unit_of(m, leaving=False) for m in capture.chat_history]
            context = self.tracer.context(_transcript(capture.chat_history), block=CHAT_HISTORY)
            self._op(GET + CHAT_HISTORY, "retrieval", inputs=[query, *messages], outputs=[context])
            self._pending.add(query, context)

    def _block_got(
        self,
        block: BaseMemoryBlock[Any],
        read: list[UnitIn],
        query: UnitIn,
        capture: _GetCapture,
        final: dict[str, Any],
    ) -> None:
        raw_text = _content_text(capture.raw[block.name])
        kept = _content_text(final.get(block.name))
        calls = capture.calls.get(block.name, _Calls())
        if isinstance(block, VectorMemoryBlock) and calls.embedded:
            query = self.tracer.query(calls.embedded[0], block=block.name)  # what it searched
        truncated: dict[str, Any] = {}
        if kept != raw_text:
            truncated["truncated"] = "dropped" if not kept else True
        context = self.tracer.context(kept, block=block.name)
        self._op(
            GET + block.name,
            "retrieval",
            inputs=[query, *read],
            outputs=[context],
            block=block.name,
            block_type=type(block).__name__,
            **truncated,
        )
        self._pending.add(query, context)

    def _read_by(self, block: BaseMemoryBlock[Any], text: str) -> list[UnitIn]:
        """The recorded memories a block's content came from."""
        if isinstance(block, FactExtractionMemoryBlock):
            current = self._facts.get(block.name)
            if current is None and block.facts:
                current = self._facts_version(block, list(block.facts))
            return [current] if current is not None else []
        nodes = self._nodes.get(block.name, {})
        return [node for known, node in nodes.items() if known in text]

    # -- answering -------------------------------------------------------------------------------

    def answer(
        self,
        answer: str | Callable[[str], str],
        *,
        retrievals: Iterable[Retrieval] | None = None,
        name: str = "answer",
        prompt: PromptLike | None = None,
        **attributes: Any,
    ) -> UnitIn:
        """The answering step over the last ``get``'s retrievals (see the module doc)."""
        used = list(retrievals) if retrievals is not None else self.take_retrievals()
        inputs = list({u.id: u for r in used for u in (r.query, r.context)}.values())
        with self.tracer.operation(
            name,
            kind="response",
            inputs=inputs,
            system=SYSTEM,
            session_id=self.session_id,
            prompt=prompt,
            **attributes,
        ) as op:
            context = "\n".join(r.context.content for r in used)
            unit = self.tracer.answer(answer(context) if callable(answer) else answer)
            op.output(unit)
        return unit


# -- the pydantic side: the block proxy and the memory ---------------------------------------------


class TracedBlock(BaseMemoryBlock[Any]):
    """A memory block as ``Memory`` sees it, recording what the wrapped ``block`` is handed and
    returns; any other attribute (a fact block's ``facts``, a vector block's ``vector_store``)
    is read from the wrapped block."""

    block: BaseMemoryBlock  # type: ignore[type-arg]  # bare: pydantic rebuilds a parametrised one
    _recorder: MemoryRecorder | None = PrivateAttr(default=None)

    @classmethod
    def wrap(cls, block: BaseMemoryBlock[Any], recorder: MemoryRecorder) -> TracedBlock:
        traced = cls(
            block=block,
            name=block.name,
            description=block.description,
            priority=block.priority,
            accept_short_term_memory=block.accept_short_term_memory,
        )
        traced._recorder = recorder
        return traced

    def __getattr__(self, name: str) -> Any:
        try:
            return super().__getattr__(name)  # type: ignore[misc]
        except AttributeError:
            block = self.__dict__.get("block")
            if block is None:
                raise
            return getattr(block, name)

    async def _aget(self, messages: list[ChatMessage] | None = None, **block_kwargs: Any) -> Any:
        return await self.block.aget(messages, **block_kwargs)

    async def _aput(self, messages: list[ChatMessage]) -> None:
        await self.block.aput(messages)

    async def aget(self, messages: list[ChatMessage] | None = None, **block_kwargs: Any) -> Any:
        calls = _Calls()
        token = _calls.set(calls)
        try:
            content = await self.block.aget(messages, **block_kwargs)
        finally:
            _calls.reset(token)
        capture = _get.get()
        if capture is not None:
            capture.calls[self.block.name] = calls
        return content

    async def aput(
        self,
        messages: list[ChatMessage],
        from_short_term_memory: bool = False,
        session_id: str | None = None,
    ) -> None:
        recorder = self._recorder
        if recorder is None or not from_short_term_memory:  # a direct put is the caller's own
            await self.block.aput(messages, from_short_term_memory, session_id)
            return
        keeps = any(_keeps(b) for b in recorder.blocks)  # a flush hands the batch to all
        batch = recorder.flushed(messages, keeps)
        before = list(getattr(self.block, "facts", []) or [])
        calls = _Calls()
        token = _calls.set(calls)
        try:
            await self.block.aput(messages, from_short_term_memory, session_id)
        finally:
            _calls.reset(token)
        if _keeps(self.block):
            recorder.block_put(self.block, batch, calls, before)

    async def atruncate(self, content: Any, tokens_to_truncate: int) -> Any:
        return await self.block.atruncate(content, tokens_to_truncate)


def _keeps(block: BaseMemoryBlock[Any]) -> bool:
    """Whether a block keeps anything of what a flush hands it."""
    return block.accept_short_term_memory and not isinstance(block, StaticMemoryBlock)


class TracedMemory(Memory):
    """A LlamaIndex ``Memory`` whose puts, flushes, blocks and gets are recorded (see the
    module doc); made by :func:`trace_memory`. ``recorder`` holds the records' state."""

    _recorder: MemoryRecorder | None = PrivateAttr(default=None)

    @property
    def recorder(self) -> MemoryRecorder:
        if self._recorder is None:
            raise RuntimeError("a TracedMemory is made by trace_memory(memory, client)")
        return self._recorder

    @property
    def tracer(self) -> Tracer:
        return self.recorder.tracer

    async def aput(self, message: ChatMessage) -> None:
        self.recorder.put([message])
        try:
            await super().aput(message)
        finally:
            self.recorder.flushes_done()

    async def aput_messages(self, messages: list[ChatMessage]) -> None:
        self.recorder.put(messages)
        try:
            await super().aput_messages(messages)
        finally:
            self.recorder.flushes_done()

    async def aset(self, messages: list[ChatMessage]) -> None:
        self.recorder.dropped(SET)
        self.recorder.put(messages)
        await super().aset(messages)

    async def areset(self, status: Any = None) -> None:
        self.recorder.dropped(RESET)
        await super().areset(status)

    async def aget(self, input: str | ChatMessage | None = None, **block_kwargs: Any) -> Any:
        capture = _GetCapture()
        token = _get.set(capture)
        try:
            result = await super().aget(input=input, **block_kwargs)
        finally:
            _get.reset(token)
        self.recorder.got(capture, self.recorder.blocks)
        return result

    async def _get_memory_blocks_content(
        self,
        chat_history: list[ChatMessage],
        input: str | ChatMessage | None = None,
        **block_kwargs: Any,
    ) -> dict[str, Any]:
        content = await super()._get_memory_blocks_content(chat_history, input, **block_kwargs)
        capture = _get.get()
        if capture is not None:
            capture.chat_history = list(chat_history)
            capture.input = input if isinstance(input, str) else None
            if isinstance(input, ChatMessage):
                capture.input = _text(input)
            capture.raw = dict(content)
        return content

    async def _truncate_memory_blocks(
        self,
        content_per_memory_block: dict[str, Any],
        memory_blocks_tokens: int,
        chat_history_tokens: int,
    ) -> dict[str, Any]:
        final = await super()._truncate_memory_blocks(
            content_per_memory_block, memory_blocks_tokens, chat_history_tokens
        )
        capture = _get.get()
        if capture is not None:
            capture.final = dict(final)
        return final

    # -- answering, as the other adapters ---------------------------------------------------------

    def answering(self) -> AbstractContextManager[None]:
        """``with memory.answering():`` around one question's ``get`` and ``answer`` when
        several questions are asked at once on one memory."""
        return self.recorder.answering()

    def answer(self, answer: str | Callable[[str], str], **kw: Any) -> UnitIn:
        """Record the answering step over the last ``get``'s retrievals; ``answer`` is the text,
        or a function from the contexts' text to it. Returns the answer unit."""
        return self.recorder.answer(answer, **kw)

    def judge(
        self,
        question: str,
        expected_answer: str,
        answer_unit: UnitIn,
        verdict: Verdict | None = None,
        *,
        judge: Callable[[str, str, str], bool] | None = None,
        evidence: Iterable[UnitLike] = (),
        **attributes: Any,
    ) -> str:
        """Record the case (see ``AnswersRetrievals.judge``); returns its id."""
        return self.recorder.judge(
            question,
            expected_answer,
            answer_unit,
            verdict,
            judge=judge,
            evidence=evidence,
            **attributes,
        )

    def message_units(self) -> list[UnitIn]:
        """The unit of every message recorded, oldest first (a case's evidence is among them)."""
        return list(self.recorder.messages)


def trace_memory(
    memory: Memory, client: MemTraceClient | Tracer, *, spool_dir: str | None = None
) -> TracedMemory:
    """A ``TracedMemory`` with ``memory``'s settings, chat store and session, whose blocks are
    ``memory``'s own, each in a :class:`TracedBlock`; use it instead of ``memory``."""
    if isinstance(memory, TracedMemory):
        raise TypeError("trace_memory: this memory is traced already")
    if not isinstance(memory, Memory):
        raise TypeError(
            f"trace_memory takes a llama_index.core.memory.Memory, not {type(memory).__name__}"
        )
    _listen()
    recorder = MemoryRecorder(as_tracer(client, spool_dir), memory.session_id)
    recorder.blocks = list(memory.memory_blocks)
    fields = {name: getattr(memory, name) for name in Memory.model_fields}
    fields["memory_blocks"] = [TracedBlock.wrap(b, recorder) for b in memory.memory_blocks]
    traced = TracedMemory(**fields)
    traced._recorder = recorder
    return traced
