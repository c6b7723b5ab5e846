"""Naive RAG: messages fill a buffer, a full buffer is finalized into a chunk, chunks are stored.

Finalizing legitimately leaves out chit-chat, so an omission alone does not mark a fault.

Faults: ExtractionError (the finalized chunk omits a buffered message), UpdateError (the next
buffer update drops a buffered message, or ``add`` stores a corrupted chunk), RetrievalError,
ResponseError. Nothing is ever deleted, so DeletionError does not apply.
"""

from __future__ import annotations

import random

from ..bm25 import BM25
from ..builder import BatchBuilder
from ..conversation import Conversation, Question
from ..labels import ErrorType, Label
from .common import ask_all, choose, emit_messages, session_id

SYSTEM = "naive_rag"
ERRORS: tuple[ErrorType, ...] = (
    "ExtractionError",
    "UpdateError",
    "RetrievalError",
    "ResponseError",
)
NEEDS_FOLLOW_UP: frozenset[ErrorType] = frozenset()
CHUNK_SIZE = 4

BUFFER_UPDATE = "memory_system.message_buffer_update"
FINALIZE = "memory_system.finalize_memory_unit"
ADD = "memory_system.add"
RETRIEVE = "memory_system.retrieve"

_Line = tuple[int | None, str]  # (index of the question whose fact it states, message line)


class _Store:
    """Runs the buffer -> chunk -> store steps and remembers where faults were injected."""

    def __init__(self, b: BatchBuilder, questions: list[Question], chat: set[str]) -> None:
        self.b = b
        self.chat = chat  # chit-chat lines, which finalizing drops
        self.questions = questions
        self.construction: dict[int, str] = {}
        self.corrupt_at_add: set[int] = set()
        self.stored: list[str] = []

    def _scenario(self, q: int | None) -> ErrorType | None:
        return None if q is None else self.questions[q].scenario

    def session(self, index: int, messages: list[str], targets: dict[tuple[int, int], int]) -> None:
        lines: list[_Line] = []
        buffer: str | None = None
        drop_next: int | None = None
        for t, message in enumerate(messages):
            q = targets.get((index, t))
            dropped, drop_next = drop_next, None
            lines = [line for line in lines if dropped is None or line[0] != dropped]
            lines.append((q, self.b.content[message]))
            new = self.b.unit("memory", "\n".join(text for _, text in lines))
            inputs = [buffer, message] if buffer else [message]
            op = self.b.op(
                BUFFER_UPDATE, "update", SYSTEM, inputs, [new], session_id=session_id(index)
            )
            if dropped is not None:
                self.construction[dropped] = op
            buffer = new
            flush = len(lines) >= CHUNK_SIZE or t == len(messages) - 1
            if q is not None and self._scenario(q) == "UpdateError":
                if self.questions[q].variant == 0 and not flush:
                    drop_next = q
                else:
                    self.corrupt_at_add.add(q)
            if flush:
                self._finalize(index, buffer, lines)
                lines, buffer = [], None

    def _finalize(self, index: int, buffer: str, lines: list[_Line]) -> None:
        kept = [
            line
            for line in lines
            if line[1] not in self.chat and self._scenario(line[0]) != "ExtractionError"
        ]
        chunk = [self.b.unit("memory", "\n".join(text for _, text in kept))] if kept else []
        op = self.b.op(
            FINALIZE, "extraction", SYSTEM, [buffer], chunk, session_id=session_id(index)
        )
        for q, _ in lines:
            if q is not None and self._scenario(q) == "ExtractionError":
                self.construction[q] = op
        if not kept:
            return
        stored_lines = []
        for q, text in kept:
            if q in self.corrupt_at_add:
                fact = self.questions[q].fact
                text = text.replace(fact.statement, fact.corrupted)
            stored_lines.append(text)
        memory = self.b.unit("memory", "\n".join(stored_lines))
        add = self.b.op(ADD, "update", SYSTEM, chunk, [memory], session_id=session_id(index))
        for q, _ in kept:
            if q in self.corrupt_at_add:
                self.construction[q] = add
        self.stored.append(memory)


def build(conv: Conversation, b: BatchBuilder, rng: random.Random, top_k: int) -> dict[str, Label]:
    """Trace the conversation through naive RAG; return the labels of the failed cases."""
    targets = {(q.session, q.turn): i for i, q in enumerate(conv.questions)}
    chat = {turn.line for turns in conv.sessions for turn in turns if turn.statement is None}
    store = _Store(b, conv.questions, chat)
    messages = []
    for index in range(len(conv.sessions)):
        messages.append(emit_messages(b, conv, index))
        store.session(index, messages[-1], targets)
    texts = [b.content[u] for u in store.stored]
    search = BM25(texts)

    def retrieve(question: Question, query: str) -> tuple[str, str]:
        chosen = [store.stored[i] for i in choose(question, texts, search, top_k)]
        context = b.unit("context", "\n\n".join(b.content[u] for u in chosen))
        op = b.op(RETRIEVE, "retrieval", SYSTEM, [query, *chosen], [context], top_k=top_k)
        return context, op

    return ask_all(
        b, conv, SYSTEM, retrieve, messages=messages, construction=store.construction, rng=rng
    )
