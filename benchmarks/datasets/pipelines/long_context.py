"""Long-context memory: one buffer unit, each session's messages appended as a new version.

Each update also compacts the buffer by dropping earlier sessions' chit-chat, so a rewrite that
loses lines is not by itself a fault.

Faults: UpdateError (a later session's update rewrites the buffer and drops or corrupts an earlier
message), RetrievalError (the passages cut from the buffer for the question omit the message),
ResponseError. There is no extraction and no deletion step, so those errors do not apply.
"""

from __future__ import annotations

import random

from ..bm25 import BM25
from ..builder import BatchBuilder
from ..conversation import Conversation, Question
from ..labels import ErrorType, Label
from .common import ask_all, choose, emit_messages, session_id

SYSTEM = "long_context"
ERRORS: tuple[ErrorType, ...] = ("UpdateError", "RetrievalError", "ResponseError")
NEEDS_FOLLOW_UP: frozenset[ErrorType] = frozenset({"UpdateError"})

MEMORY_UPDATE = "memory_system.memory_update"
RETRIEVE = "memory_system.retrieve"


def _rewrite(lines: list[str], question: Question) -> list[str]:
    """The faulty rewrite: drop (variant 0) or corrupt (variant 1) the line stating the fact."""
    fact = question.fact
    if question.variant == 0:
        return [line for line in lines if fact.statement not in line]
    return [line.replace(fact.statement, fact.corrupted) for line in lines]


def build(conv: Conversation, b: BatchBuilder, rng: random.Random, top_k: int) -> dict[str, Label]:
    """Trace the conversation through a long-context buffer; return the failed cases' labels."""
    lines: list[str] = []
    buffer: str | None = None
    messages: list[list[str]] = []
    construction: dict[int, str] = {}
    chat = {turn.line for turns in conv.sessions for turn in turns if turn.statement is None}
    for index in range(len(conv.sessions)):
        messages.append(emit_messages(b, conv, index))
        damaged = [
            i
            for i, q in enumerate(conv.questions)
            if q.scenario == "UpdateError" and q.follow_up_session == index
        ]
        for i in damaged:
            lines = _rewrite(lines, conv.questions[i])
        lines = [line for line in lines if line not in chat] + [b.content[m] for m in messages[-1]]
        new = b.unit("memory", "\n".join(lines))
        inputs = [buffer, *messages[-1]] if buffer else messages[-1]
        op = b.op(MEMORY_UPDATE, "update", SYSTEM, inputs, [new], session_id=session_id(index))
        construction.update(dict.fromkeys(damaged, op))
        buffer = new
    assert buffer is not None
    final = buffer
    search = BM25(lines)

    def retrieve(question: Question, query: str) -> tuple[str, str]:
        chosen = sorted(choose(question, lines, search, top_k))
        context = b.unit("context", "\n".join(lines[i] for i in chosen))
        op = b.op(RETRIEVE, "retrieval", SYSTEM, [query, final], [context], top_k=top_k)
        return context, op

    return ask_all(b, conv, SYSTEM, retrieve, messages=messages, construction=construction, rng=rng)
