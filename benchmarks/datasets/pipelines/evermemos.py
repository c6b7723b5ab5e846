"""EverMemOS-like: boundary detection cuts sessions into MemCells, extraction turns each MemCell
into atomic facts plus an episode note, and a multi-stage retrieval (BM25 and embedding candidates,
hybrid fusion, agentic final rerank) builds the context.

Faults: ExtractionError (a MemCell's extraction omits a fact), RetrievalError (hybrid fusion or the
final rerank drops a memory both first-stage retrievers found), ResponseError. Memories are never
updated or deleted here, so UpdateError and DeletionError do not apply.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Sequence

from ..bm25 import BM25, tokenize
from ..builder import BatchBuilder
from ..conversation import Conversation, Question, Turn
from ..labels import ErrorType, Label
from .common import ask_all, emit_messages, holder, select, session_id

SYSTEM = "evermemos"
ERRORS: tuple[ErrorType, ...] = ("ExtractionError", "RetrievalError", "ResponseError")
NEEDS_FOLLOW_UP: frozenset[ErrorType] = frozenset()
CANDIDATES = 20
RRF_K = 60

BOUNDARY = "evermemos.boundary_detection"
EXTRACT = "memory_system.extract_memory"
BM25_RETRIEVAL = "bm25_retrieval"
EMBEDDING_RETRIEVAL = "embedding_retrieval"
HYBRID = "hybrid_retrieval"
RERANK = "agentic_final_rerank"


def _stem(token: str) -> str:
    for suffix in ("ing", "ed", "s"):
        if len(token) > len(suffix) + 3 and token.endswith(suffix):
            return token[: -len(suffix)]
    return token


class _Embedding:
    """Stand-in for a dense retriever: cosine over stemmed bags of words (ranks unlike BM25)."""

    def __init__(self, texts: Sequence[str]) -> None:
        self._vectors = [Counter(_stem(t) for t in tokenize(text)) for text in texts]

    def rank(self, query: str) -> list[int]:
        q = Counter(_stem(t) for t in tokenize(query))
        q_norm = math.sqrt(sum(v * v for v in q.values())) or 1.0

        def cosine(v: Counter[str]) -> float:
            dot = sum(q[t] * v[t] for t in q)
            return dot / (q_norm * (math.sqrt(sum(x * x for x in v.values())) or 1.0))

        scores = [cosine(v) for v in self._vectors]
        return sorted(range(len(scores)), key=lambda i: (-scores[i], i))


def _segments(rng: random.Random, n: int) -> list[range]:
    """Boundary detection: consecutive runs of 3 to 6 messages."""
    cuts, start = [], 0
    while start < n:
        end = min(n, start + rng.randint(3, 6))
        cuts.append(range(start, end))
        start = end
    return cuts


def _episode(turns: list[Turn]) -> str:
    speakers = list(dict.fromkeys(t.speaker for t in turns))
    people = list(dict.fromkeys(t.person for t in turns if t.person))
    topics = ", ".join(people) if people else "everyday things"
    return f"Episode: {' and '.join(speakers)} chatted about {topics}."


def _extract(
    b: BatchBuilder, conv: Conversation, rng: random.Random
) -> tuple[list[list[str]], list[str], dict[int, str]]:
    """Boundary detection and extraction over every session: (messages, memories, faults)."""
    lost = {
        q.fact.statement: i for i, q in enumerate(conv.questions) if q.scenario == "ExtractionError"
    }
    messages: list[list[str]] = []
    memories: list[str] = []
    construction: dict[int, str] = {}
    for index, turns in enumerate(conv.sessions):
        messages.append(emit_messages(b, conv, index))
        segments = _segments(rng, len(turns))
        cells = [b.unit("other", "\n".join(turns[i].line for i in seg)) for seg in segments]
        b.op(BOUNDARY, "other", SYSTEM, messages[-1], cells, session_id=session_id(index))
        for cell, seg in zip(cells, segments, strict=True):
            said = [turns[i] for i in seg]
            atomic = [t.statement for t in said if t.statement and t.statement not in lost]
            outputs = [b.unit("memory", text) for text in [*atomic, _episode(said)]]
            op = b.op(EXTRACT, "extraction", SYSTEM, [cell], outputs, session_id=session_id(index))
            memories.extend(outputs)
            for turn in said:
                if turn.statement in lost:
                    construction[lost[turn.statement]] = op
    return messages, memories, construction


def _rrf(*rankings: list[int]) -> list[int]:
    score: dict[int, float] = {}
    for ranking in rankings:
        for rank, doc in enumerate(ranking):
            score[doc] = score.get(doc, 0.0) + 1.0 / (RRF_K + rank + 1)
    return sorted(score, key=lambda d: (-score[d], d))


def build(conv: Conversation, b: BatchBuilder, rng: random.Random, top_k: int) -> dict[str, Label]:
    """Trace the conversation through EverMemOS-like memory; return the failed cases' labels."""
    messages, memories, construction = _extract(b, conv, rng)
    texts = [b.content[u] for u in memories]
    bm25, embedding = BM25(texts), _Embedding(texts)

    def listing(ids: list[int]) -> str:
        return b.unit("context", "\n".join(texts[i] for i in ids))

    def retrieve(question: Question, query: str) -> tuple[str, str]:
        found = holder(question, texts)
        miss = question.scenario == "RetrievalError"
        at_hybrid, at_rerank = miss and question.variant == 0, miss and question.variant == 1
        text = question.fact.question
        by_bm25 = select(bm25.rank(text), CANDIDATES, include=found, exclude=None)
        by_embedding = select(embedding.rank(text), CANDIDATES, include=found, exclude=None)
        first = []
        for name, ids in ((BM25_RETRIEVAL, by_bm25), (EMBEDDING_RETRIEVAL, by_embedding)):
            unit = listing(ids)
            b.op(name, "retrieval", SYSTEM, [query, *(memories[i] for i in ids)], [unit])
            first.append(unit)
        fused = select(
            _rrf(by_bm25, by_embedding),
            CANDIDATES,
            include=None if at_hybrid else found,
            exclude=found if at_hybrid else None,
        )
        fused_unit = listing(fused)
        hybrid = b.op(HYBRID, "retrieval", SYSTEM, first, [fused_unit], rrf_k=RRF_K)
        scores = bm25.scores(text)
        reranked = sorted(fused, key=lambda i: -scores[i])
        final = select(
            reranked,
            top_k,
            include=None if miss else found,
            exclude=found if at_rerank else None,
        )
        context = listing(final)
        rerank = b.op(RERANK, "retrieval", SYSTEM, [query, fused_unit], [context], top_k=top_k)
        return context, hybrid if at_hybrid else rerank

    return ask_all(b, conv, SYSTEM, retrieve, messages=messages, construction=construction, rng=rng)
