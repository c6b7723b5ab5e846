"""Finding evidence when a case names none: BM25 over the project's source messages.

The query is the question plus the expected answer, as in the MemTrace paper's seeds. Dense
embeddings fused by reciprocal rank would help with paraphrase; they are not wired in yet, so this
stays lexical and offline.
"""

from __future__ import annotations

import bm25s

from service.attribution.judges.heuristic import STOPWORDS


def rank_messages(messages: list[tuple[str, str]], query: str, k: int) -> list[str]:
    """Ids of the ``k`` messages that best match ``query``, best first (only those that match)."""
    if not messages:
        return []
    stopwords = sorted(STOPWORDS)
    corpus = bm25s.tokenize(
        [text for _, text in messages], stopwords=stopwords, show_progress=False
    )
    retriever = bm25s.BM25()
    retriever.index(corpus, show_progress=False)
    tokens = bm25s.tokenize([query], stopwords=stopwords, show_progress=False)
    k = min(k, len(messages))
    docs, scores = retriever.retrieve(tokens, k=k, show_progress=False)
    return [messages[int(i)][0] for i, s in zip(docs[0], scores[0], strict=True) if s > 0]
