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

The retrievals of one ``get`` are recorded store readers first, then the other blocks, then the
chat history (``MemoryRecorder.got`` says why). ``answer(...)`` records the answering step over
the last ``get``'s retrievals (response), earlier unanswered gets dropped, and
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

from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from typing import Any

from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.bridge.pydantic import PrivateAttr
from llama_index.core.memory import Memory
from llama_index.core.memory.memory import BaseMemoryBlock
from llama_index.core.storage.chat_store.base_db import MessageStatus

from memtrace_client.adapters.answering import as_tracer
from memtrace_client.adapters.llama_index_recorder import (
    CHAT_HISTORY,
    CONDENSE,
    EXTRACT,
    FLUSH,
    GET,
    INSERT,
    RESET,
    SET,
    STORE,
    Calls,
    GetCapture,
    MemoryRecorder,
    calls_var,
    get_var,
    keeps_flushes,
    listen,
    message_text,
)
from memtrace_client.client import MemTraceClient
from memtrace_client.models import UnitIn, Verdict
from memtrace_client.tracer import Tracer, UnitLike

__all__ = [
    "CHAT_HISTORY",
    "CONDENSE",
    "EXTRACT",
    "FLUSH",
    "GET",
    "INSERT",
    "RESET",
    "STORE",
    "MemoryRecorder",
    "TracedBlock",
    "TracedMemory",
    "trace_memory",
]


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
        calls = Calls()
        token = calls_var.set(calls)
        try:
            content = await self.block.aget(messages, **block_kwargs)
        finally:
            calls_var.reset(token)
        capture = get_var.get()
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
        batch = recorder.flushed(messages)
        before = list(getattr(self.block, "facts", []) or [])
        calls = Calls()
        token = calls_var.set(calls)
        try:
            await self.block.aput(messages, from_short_term_memory, session_id)
        finally:
            calls_var.reset(token)
        if keeps_flushes(self.block):
            recorder.block_put(self.block, batch, calls, before)

    async def atruncate(self, content: Any, tokens_to_truncate: int) -> Any:
        return await self.block.atruncate(content, tokens_to_truncate)


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
        await super().aput(message)

    async def aput_messages(self, messages: list[ChatMessage]) -> None:
        self.recorder.put(messages)
        await super().aput_messages(messages)

    async def aset(self, messages: list[ChatMessage]) -> None:
        self.recorder.dropped(SET)
        self.recorder.put(messages)
        await super().aset(messages)

    async def areset(self, status: MessageStatus | None = None) -> None:
        if status in (None, MessageStatus.ACTIVE):  # archived ones live on in the blocks
            self.recorder.dropped(RESET)
        await super().areset(status)

    async def aget(self, input: str | ChatMessage | None = None, **block_kwargs: Any) -> Any:
        capture = GetCapture()
        token = get_var.set(capture)
        try:
            result = await super().aget(input=input, **block_kwargs)
        finally:
            get_var.reset(token)
        self.recorder.got(capture, self.recorder.blocks)
        return result

    async def _get_memory_blocks_content(
        self,
        chat_history: list[ChatMessage],
        input: str | ChatMessage | None = None,
        **block_kwargs: Any,
    ) -> dict[str, Any]:
        content = await super()._get_memory_blocks_content(chat_history, input, **block_kwargs)
        capture = get_var.get()
        if capture is not None:
            capture.chat_history = list(chat_history)
            capture.input = input if isinstance(input, str) else None
            if isinstance(input, ChatMessage):
                capture.input = message_text(input)
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
        capture = get_var.get()
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
    listen()
    recorder = MemoryRecorder(as_tracer(client, spool_dir), memory.session_id)
    recorder.blocks = list(memory.memory_blocks)
    fields = {name: getattr(memory, name) for name in Memory.model_fields}
    fields["memory_blocks"] = [TracedBlock.wrap(b, recorder) for b in memory.memory_blocks]
    traced = TracedMemory(**fields)
    traced._recorder = recorder
    return traced
