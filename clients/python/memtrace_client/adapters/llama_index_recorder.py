"""What the LlamaIndex adapter (:mod:`memtrace_client.adapters.llama_index`) records, kept
apart from its pydantic models: the units and operations of puts, flushes, blocks and gets.

A block's own calls (the LLM replies of fact extraction, the texts a vector block embeds) come
from LlamaIndex's instrumentation: one handler on the root dispatcher hands every
``LLMChatEndEvent`` and ``EmbeddingEndEvent`` to the :class:`Calls` of the traced block call it
was made in (a context variable), and ignores the rest.
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from llama_index.core.base.llms.types import ChatMessage, TextBlock
from llama_index.core.instrumentation import get_dispatcher  # type: ignore[attr-defined]
from llama_index.core.instrumentation.event_handlers import BaseEventHandler
from llama_index.core.instrumentation.events import BaseEvent
from llama_index.core.instrumentation.events.embedding import EmbeddingEndEvent
from llama_index.core.instrumentation.events.llm import LLMChatEndEvent
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
    digest,
    package_version,
)
from memtrace_client.models import OperationKind, UnitIn
from memtrace_client.prompts import PromptLike
from memtrace_client.tracer import Tracer

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
class Calls:
    """The LLM replies and embedded texts of one block call, in order."""

    replies: list[str] = field(default_factory=list)
    embedded: list[str] = field(default_factory=list)


calls_var: contextvars.ContextVar[Calls | None] = contextvars.ContextVar(
    "memtrace_llama_index_calls", default=None
)


class _CallListener(BaseEventHandler):
    """On the root dispatcher: every chat reply and embedding made inside a traced block call
    goes to that call's :class:`Calls` (none outside one: then it returns at once)."""

    @classmethod
    def class_name(cls) -> str:
        return "MemTraceBlockCalls"

    def handle(self, event: BaseEvent, **kwargs: Any) -> None:
        calls = calls_var.get()
        if calls is None:
            return
        if isinstance(event, LLMChatEndEvent) and event.response is not None:
            calls.replies.append(str(event.response.message.content or ""))
        elif isinstance(event, EmbeddingEndEvent):
            calls.embedded.extend(event.chunks)


_listening = threading.Lock()
_listener: _CallListener | None = None


def listen() -> None:
    global _listener
    with _listening:
        if _listener is None:
            _listener = _CallListener()
            get_dispatcher().add_event_handler(_listener)


# -- what one get() saw, from the memory's own steps -----------------------------------------------


@dataclass
class GetCapture:
    chat_history: list[ChatMessage] = field(default_factory=list)
    input: str | None = None
    calls: dict[str, Calls] = field(default_factory=dict)  # block name -> its get's calls
    raw: dict[str, Any] = field(default_factory=dict)  # block name -> content it returned
    final: dict[str, Any] | None = None  # after truncation


get_var: contextvars.ContextVar[GetCapture | None] = contextvars.ContextVar(
    "memtrace_llama_index_get", default=None
)


def message_text(message: ChatMessage) -> str:
    return "".join(b.text for b in message.blocks if isinstance(b, TextBlock))


def _role(message: ChatMessage) -> str:
    return str(getattr(message.role, "value", message.role))


def _transcript(messages: Iterable[ChatMessage]) -> str:
    return "\n".join(f"{_role(m)}: {message_text(m)}" for m in messages)


def _content_text(content: Any) -> str:
    """The text a block's content puts into the context (text blocks and messages)."""
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for item in content or ():
        if isinstance(item, ChatMessage):
            parts.append(message_text(item))
        elif isinstance(item, TextBlock):
            parts.append(item.text)
    return "\n".join(parts)


def _template_text(template: Any) -> str:
    return str(getattr(template, "template_str", None) or getattr(template, "template", ""))


def _facts_text(facts: Iterable[str]) -> str:
    """The fact list as the block puts it into the context."""
    return "\n".join(f"<fact>{fact}</fact>" for fact in facts)


@dataclass
class _Flush:
    messages: list[ChatMessage]  # kept, so that its id names no other list meanwhile
    batch: UnitIn
    handed: int = 0  # blocks handed it so far


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
        self._batches: dict[int, _Flush] = {}  # flushes under way, by id of the list handed
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

    def _op(self, name: str, kind: OperationKind, **kw: Any) -> str:
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
                unit = self.tracer.message(message_text(m), role=_role(m))
                self._active.append((_role(m), message_text(m), unit))
                self.messages.append(unit)

    def _unit_of(self, message: ChatMessage, *, leaving: bool) -> UnitIn:
        """The unit of a message in the queue, the oldest of that role and text (the queue is
        FIFO); one met for the first time (in the store before it was wrapped) is recorded."""
        role, text = _role(message), message_text(message)
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

    def flushed(self, messages: list[ChatMessage]) -> UnitIn:
        """The batch unit of one flush, recorded when the first block is handed it: ``Memory``
        hands every block the same list, so the list names the flush until the last block has
        been handed it. With no block that keeps what it is handed, the messages left the memory
        for nowhere: the flush is a deletion."""
        with self._lock:
            known = self._batches.get(id(messages))
            if known is None:
                units = [self._unit_of(m, leaving=True) for m in messages]
                batch = self.tracer.unit("other", _transcript(messages), role="flushed_batch")
                known = self._batches[id(messages)] = _Flush(messages, batch)
                keeps = any(keeps_flushes(b) for b in self.blocks)
                self._op(
                    FLUSH,
                    "update" if keeps else "deletion",
                    inputs=units,
                    outputs=[batch] if keeps else [],
                    messages=len(units),
                )
            known.handed += 1
            if known.handed >= len(self.blocks):  # every block has it: the id may be reused
                del self._batches[id(messages)]
            return known.batch

    def dropped(self, name: str) -> None:
        """``reset``/``set``: the messages still in the short-term queue are gone."""
        with self._lock:
            units = [unit for _, _, unit in self._active]
            self._active.clear()
        if units:
            self._op(name, "deletion", inputs=units, messages=len(units))

    # -- what a block did with a batch -----------------------------------------------------------

    def block_put(
        self, block: BaseMemoryBlock[Any], batch: UnitIn, calls: Calls, facts_before: list[str]
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
        self, block: FactExtractionMemoryBlock, batch: UnitIn, calls: Calls, before: list[str]
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
            prompt=(
                EXTRACTION_PROMPT,
                _template_text(block.fact_extraction_prompt_template),
            ),
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
                prompt=(
                    CONDENSE_PROMPT,
                    _template_text(block.fact_condense_prompt_template),
                ),
                block=name,
                max_facts=block.max_facts,
                applied=list(block.facts) != appended,
            )

    def _vector_put(self, block: VectorMemoryBlock, batch: UnitIn, calls: Calls) -> None:
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

    def got(self, capture: GetCapture, blocks: list[BaseMemoryBlock[Any]]) -> None:
        """One ``get``: a retrieval per block that returned content, and the chat history.

        Recorded in this order: the blocks whose content came from recorded memories (in the
        order ``Memory`` asked them), then the other blocks, then the chat history. Why: where
        the store held the information and the context lacked it, attribution blames the first
        retrieval of the answer's lineage that lacked it, and only a block that reads the store
        could have put it there (a static block or the short-term queue could not).

        A ``get`` returns the whole context every time, so the next answer reads this one's
        retrievals only: those of earlier gets nobody answered (a chat engine's turns) are
        dropped."""
        self._pending.take()
        said = capture.input
        if said is None:
            said = next(
                (message_text(m) for m in reversed(capture.chat_history) if _role(m) == "user"), ""
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
        capture: GetCapture,
        final: dict[str, Any],
    ) -> None:
        raw_text = _content_text(capture.raw[block.name])
        kept = _content_text(final.get(block.name))
        calls = capture.calls.get(block.name, Calls())
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


def keeps_flushes(block: BaseMemoryBlock[Any]) -> bool:
    """Whether a block keeps anything of what a flush hands it."""
    return block.accept_short_term_memory and not isinstance(block, StaticMemoryBlock)
