"""Mem0 (classic): extract facts per session, decide ADD/UPDATE/DELETE/NONE per fact, embed, search.

Each decision is one ``update_memory_decision`` operation that sees the new fact and the person's
existing memories. ADD creates a memory, UPDATE a new version of one (consuming the old), DELETE a
``tombstone``, NONE nothing. Legitimate merges, retractions and repeats happen throughout, so an
UPDATE or DELETE touching a fact is not by itself a fault. Faults: ExtractionError (the extraction
output omits the fact), UpdateError (a merge drops or corrupts the fact), DeletionError (an
unrelated remark deletes the memory), RetrievalError, ResponseError.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from ..bm25 import BM25
from ..builder import BatchBuilder
from ..conversation import Conversation, Question, Turn
from ..labels import ERROR_TYPES, ErrorType, Label
from .common import ask_all, choose, emit_messages, session_id

SYSTEM = "mem0"
ERRORS: tuple[ErrorType, ...] = ERROR_TYPES
NEEDS_FOLLOW_UP: frozenset[ErrorType] = frozenset({"UpdateError", "DeletionError"})
SIMILAR = 3  # old memories shown to each decision

EXTRACT = "memory_system.extract_facts"
DECIDE = "memory_system.update_memory_decision"
EMBED = "memory_system.add_to_vector_store"
SEARCH = "memory_system.search_vector_store"


@dataclass
class _Memory:
    memory_id: str
    person: str
    unit: str
    record: str


class _Store:
    """Live memories in creation order, by the statement that created them, and per person."""

    def __init__(self, b: BatchBuilder, questions: list[Question]) -> None:
        self.b = b
        self.live: dict[str, _Memory] = {}
        self.created = 0
        self.by_statement: dict[str, _Memory] = {}
        self.by_person: dict[str, list[_Memory]] = {}
        self.target = {q.fact.statement: (i, q) for i, q in enumerate(questions)}
        self.construction: dict[int, str] = {}

    def _similar(self, person: str, first: _Memory | None) -> list[str]:
        others = [m for m in reversed(self.by_person.get(person, [])) if m is not first]
        chosen = ([first] if first else []) + others
        return [m.unit for m in chosen[:SIMILAR]]

    def _embed(self, memory_id: str, unit: str, sid: str) -> str:
        record = self.b.unit("other", self.b.content[unit], memory_id=memory_id)
        self.b.op(EMBED, "embedding", SYSTEM, [unit], [record], session_id=sid)
        return record

    def decide(self, fact: str, turn: Turn, sid: str) -> None:
        """Apply the decision the plan implies for one extracted fact."""
        assert turn.person is not None and turn.statement is not None
        event = turn.event
        related = self.by_statement.get(event.related) if event else None
        inputs = [fact, *self._similar(turn.person, related)]
        if event is None:
            self._add(turn.statement, turn.person, inputs, sid)
        elif event.kind == "repeat" or related is None:
            self.b.op(DECIDE, "update", SYSTEM, inputs, [], session_id=sid, event="NONE")
        elif event.kind == "retract":
            self._delete(event.related, related, inputs, sid)
        else:
            self._merge(event.related, related, turn.statement, inputs, sid)

    def _add(self, statement: str, person: str, inputs: list[str], sid: str) -> None:
        self.created += 1
        memory_id = f"mem-{self.created:05d}"
        unit = self.b.unit("memory", statement, memory_id=memory_id)
        self.b.op(DECIDE, "update", SYSTEM, inputs, [unit], session_id=sid, event="ADD")
        memory = _Memory(memory_id, person, unit, self._embed(memory_id, unit, sid))
        self.live[memory_id] = memory
        self.by_statement[statement] = memory
        self.by_person.setdefault(person, []).append(memory)

    def _delete(self, key: str, memory: _Memory, inputs: list[str], sid: str) -> str:
        tomb = self.b.unit("tombstone", "DELETED", memory_id=memory.memory_id)
        op = self.b.op(DECIDE, "update", SYSTEM, inputs, [tomb], session_id=sid, event="DELETE")
        del self.by_statement[key]
        del self.live[memory.memory_id]
        self.by_person[memory.person].remove(memory)
        return op

    def _merge(self, key: str, memory: _Memory, addition: str, inputs: list[str], sid: str) -> None:
        target = self.target.get(key)
        old = self.b.content[memory.unit]
        if target and target[1].scenario == "DeletionError":
            self.construction[target[0]] = self._delete(key, memory, inputs, sid)
            return
        if target and target[1].scenario == "UpdateError":
            fact = target[1].fact
            content = addition if target[1].variant == 0 else f"{fact.corrupted} {addition}"
        else:
            content = f"{old} {addition}"
        unit = self.b.unit("memory", content, memory_id=memory.memory_id)
        op = self.b.op(DECIDE, "update", SYSTEM, inputs, [unit], session_id=sid, event="UPDATE")
        if target and target[1].scenario == "UpdateError":
            self.construction[target[0]] = op
        memory.unit = unit
        memory.record = self._embed(memory.memory_id, unit, sid)


def build(conv: Conversation, b: BatchBuilder, rng: random.Random, top_k: int) -> dict[str, Label]:
    """Trace the conversation through Mem0's add/search; return the failed cases' labels."""
    store = _Store(b, conv.questions)
    lost = {
        q.fact.statement: i for i, q in enumerate(conv.questions) if q.scenario == "ExtractionError"
    }
    messages = []
    for index, turns in enumerate(conv.sessions):
        messages.append(emit_messages(b, conv, index))
        sid = session_id(index)
        kept = [t for t in turns if t.statement and t.statement not in lost]
        facts = [b.unit("memory", t.statement or "") for t in kept]
        op = b.op(EXTRACT, "extraction", SYSTEM, messages[-1], facts, session_id=sid)
        for turn in turns:
            if turn.statement in lost and turn.event is None:
                store.construction[lost[turn.statement]] = op
        for fact, turn in zip(facts, kept, strict=True):
            store.decide(fact, turn, sid)
    live = list(store.live.values())
    texts = [b.content[m.record] for m in live]
    search = BM25(texts)

    def retrieve(question: Question, query: str) -> tuple[str, str]:
        chosen = [live[i].record for i in choose(question, texts, search, top_k)]
        context = b.unit("context", "\n".join(b.content[u] for u in chosen))
        op = b.op(SEARCH, "retrieval", SYSTEM, [query, *chosen], [context], top_k=top_k)
        return context, op

    return ask_all(
        b, conv, SYSTEM, retrieve, messages=messages, construction=store.construction, rng=rng
    )
