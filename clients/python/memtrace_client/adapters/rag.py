"""A plain RAG memory built on the ``Tracer``: the reference example to copy.

    rag = TracedRAG(tracer, embed=my_embed, generate=my_llm)
    rag.remember("I moved to Lisbon in spring 2020.")          # chunk -> embed -> store
    answer = rag.ask("Where did the user move in 2020?")        # retrieve -> answer
    rag.judge("Where did the user move in 2020?", "Lisbon", answer)

Each step is one operation, so MemTrace can tell where an answer went wrong:

- ``rag.chunk`` (extraction): a source message -> its chunks, each a ``memory`` unit with its
  own ``memory_id`` (what the store keeps). A fact split across chunks or dropped by a filter
  shows up here as an ExtractionError;
- ``rag.retrieve`` (retrieval): the question plus the ``top_k`` chunks chosen -> one context
  unit. A chunk that held the answer but was not chosen is a RetrievalError;
- ``rag.answer`` (response): question and context -> the answer. An answer that ignores a
  context holding the fact is a ResponseError.

``embed`` maps texts to vectors (your embedding model) and ``generate(question, context)``
returns the answer (your LLM); the store is a list searched by cosine similarity, enough for an
example and for tests. Swap in your vector database and keep the three ``tracer`` calls.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from memtrace_client.adapters.judging import decided_verdict
from memtrace_client.models import UnitIn, Verdict
from memtrace_client.tracer import Tracer

Embed = Callable[[list[str]], list[list[float]]]
Generate = Callable[[str, str], str]


@dataclass(frozen=True)
class Chunk:
    unit: UnitIn
    vector: list[float]


def _cosine(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=False))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0


def split_words(text: str, size: int) -> list[str]:
    """Consecutive pieces of at most ``size`` words (whitespace kept simple)."""
    words = text.split()
    return [" ".join(words[i : i + size]) for i in range(0, len(words), size)] or [text]


class TracedRAG:
    """Chunk -> embed -> store -> retrieve -> answer, each step recorded with ``tracer``."""

    def __init__(
        self,
        tracer: Tracer,
        *,
        embed: Embed,
        generate: Generate,
        chunk_words: int = 80,
        top_k: int = 3,
        system: str = "rag",
    ) -> None:
        self.tracer = tracer
        self.embed = embed
        self.generate = generate
        self.chunk_words = chunk_words
        self.top_k = top_k
        self.system = system
        self.store: list[Chunk] = []

    def remember(self, text: str, *, role: str = "user", session_id: str | None = None) -> UnitIn:
        """Add one message to the memory; returns its unit (for a case's evidence)."""
        source = self.tracer.message(text, role=role)
        pieces = split_words(text, self.chunk_words)
        with self.tracer.operation(
            "rag.chunk",
            kind="extraction",
            inputs=[source],
            system=self.system,
            session_id=session_id,
            chunk_words=self.chunk_words,
        ) as op:
            vectors = self.embed(pieces)
            for piece, vector in zip(pieces, vectors, strict=True):
                unit = self.tracer.memory(piece, memory_id=f"chunk-{len(self.store)}")
                op.output(unit)
                self.store.append(Chunk(unit, vector))
        return source

    def retrieve(self, question: str) -> tuple[UnitIn, UnitIn]:
        """The ``top_k`` chunks closest to the question; returns (query unit, context unit)."""
        query = self.tracer.query(question)
        with self.tracer.operation(
            "rag.retrieve", kind="retrieval", inputs=[query], system=self.system, top_k=self.top_k
        ) as op:
            [target] = self.embed([question])
            ranked = sorted(self.store, key=lambda c: _cosine(c.vector, target), reverse=True)
            chosen = ranked[: self.top_k]
            op.input(*(c.unit for c in chosen))
            context = self.tracer.context("\n".join(c.unit.content for c in chosen))
            op.output(context)
        return query, context

    def ask(self, question: str) -> UnitIn:
        """Retrieve, then answer with ``generate``; returns the answer unit."""
        query, context = self.retrieve(question)
        with self.tracer.operation(
            "rag.answer", kind="response", inputs=[query, context], system=self.system
        ) as op:
            answer = self.tracer.answer(self.generate(question, context.content))
            op.output(answer)
        return answer

    def judge(
        self,
        question: str,
        expected_answer: str,
        answer: UnitIn,
        verdict: Verdict | None = None,
        *,
        evidence: Iterable[UnitIn] = (),
    ) -> str:
        """Record the case; by default it passed when every word of the expected answer is in
        the answer. ``evidence``: the messages that held the answer, when you know them."""
        decided = decided_verdict(question, expected_answer, answer.content, verdict)
        return self.tracer.case(
            question, expected_answer, answer, decided, evidence_units=evidence, system=self.system
        )
