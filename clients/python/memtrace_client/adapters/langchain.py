"""Trace LangChain (``langchain-core``): retrievals and chat-history writes, with lineage.

    from memtrace_client.adapters.langchain import MemTraceCallbackHandler, TracedChatMessageHistory
    handler = MemTraceCallbackHandler(tracer)
    docs = retriever.invoke(question, config={"callbacks": [handler]})
    history = TracedChatMessageHistory(InMemoryChatMessageHistory(), tracer, session_id="s1")

- Every retriever run seen by the callback handler is a retrieval operation
  (``langchain.retriever.<name>``): the query (a ``query`` unit) and each returned document's
  stored unit, when the tracer recorded one with the same text (a memory written before), in;
  one ``context`` unit per returned document out. A retriever that fails is recorded with
  ``error``.
- ``TracedChatMessageHistory`` wraps any ``BaseChatMessageHistory``: ``add_messages`` is an
  update operation (``langchain.history.add_messages``) from each message to the memory entry
  the history now holds (``memory_id`` ``<session>#<position>``), and ``clear`` a deletion
  producing a tombstone per entry. Reading the history is not an operation: when its texts
  reach a prompt of a traced OpenAI client, that call consumes the entries
  (``memtrace_client.adapters.lineage``).

Install with ``pip install memtrace-client[langchain]``. Record what a store holds before it is
searched (``tracer.memory(text)`` where documents are added), so retrievals link to it.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.chat_history import BaseChatMessageHistory
from langchain_core.documents import Document
from langchain_core.messages import BaseMessage

from memtrace_client.adapters.lineage import index_of
from memtrace_client.models import UnitIn
from memtrace_client.tracer import Tracer

SYSTEM = "langchain"


def _text(message: BaseMessage) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    return "\n".join(str(p.get("text", "")) if isinstance(p, dict) else str(p) for p in content)


class MemTraceCallbackHandler(BaseCallbackHandler):
    """A LangChain callback handler recording retriever runs as retrieval operations."""

    def __init__(self, tracer: Tracer, *, session_id: str | None = None) -> None:
        self.tracer = tracer
        self.session_id = session_id
        self.index = index_of(tracer)
        self._runs: dict[UUID, tuple[str, UnitIn, datetime]] = {}

    def on_retriever_start(
        self,
        serialized: dict[str, Any] | None,
        query: str,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        name = kwargs.get("name") or (serialized or {}).get("name") or "retriever"
        started = datetime.now(UTC)
        self._runs[run_id] = (f"langchain.retriever.{name}", self.tracer.query(query), started)

    def on_retriever_end(
        self, documents: Sequence[Document], *, run_id: UUID, **kwargs: Any
    ) -> None:
        run = self._runs.pop(run_id, None)
        if run is None:
            return
        name, query, started = run
        inputs = [query.id]
        outputs = []
        for document in documents:
            stored = self.index.unit_for(document.page_content)
            if stored is not None and stored not in inputs:
                inputs.append(stored)
            extra = {"document_id": document.id} if document.id else {}
            outputs.append(self.tracer.context(document.page_content, **extra))
        self.tracer.record_operation(
            name,
            kind="retrieval",
            inputs=inputs,
            outputs=outputs,
            ts=started,
            system=SYSTEM,
            session_id=self.session_id,
            returned=len(outputs),
        )

    def on_retriever_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        run = self._runs.pop(run_id, None)
        if run is not None:
            name, query, started = run
            self.tracer.record_operation(
                name,
                kind="retrieval",
                inputs=[query],
                ts=started,
                system=SYSTEM,
                session_id=self.session_id,
                error=type(error).__name__,
            )


class TracedChatMessageHistory(BaseChatMessageHistory):
    """Any chat message history, its writes recorded as memory operations."""

    def __init__(
        self, history: BaseChatMessageHistory, tracer: Tracer, *, session_id: str = "history"
    ) -> None:
        self.history = history
        self.tracer = tracer
        self.session_id = session_id
        self.index = index_of(tracer)

    @property
    def messages(self) -> list[BaseMessage]:  # type: ignore[override]
        return self.history.messages

    def add_messages(self, messages: Sequence[BaseMessage]) -> None:
        position = len(self.history.messages)
        with self.tracer.operation(
            "langchain.history.add_messages",
            kind="update",
            system=SYSTEM,
            session_id=self.session_id,
        ) as op:
            self.history.add_messages(messages)
            for n, message in enumerate(messages, position):
                text = _text(message)
                said = self.index.unit_for(text) or self.tracer.message(text, role=message.type)
                op.input(said)
                entry = f"{self.session_id}#{n}"
                op.output(self.tracer.memory(text, memory_id=entry, role=message.type))

    def clear(self) -> None:
        held = len(self.history.messages)
        with self.tracer.operation(
            "langchain.history.clear", kind="deletion", system=SYSTEM, session_id=self.session_id
        ) as op:
            self.history.clear()
            for n in range(held):
                op.output(self.tracer.tombstone(f"{self.session_id}#{n}"))
