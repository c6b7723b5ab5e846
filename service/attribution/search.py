"""Finding evidence when a case names none: the project's source messages that best match the
question plus the expected answer (the MemTrace paper's seed query).

Lexical ranking is BM25 (``bm25s``, words stemmed by PyStemmer's English Snowball stemmer, so
"adopted" meets "adoption"). When an OpenAI-compatible embeddings endpoint is configured,
a dense ranking by cosine similarity is fused with it by reciprocal rank (k = 60), which finds
paraphrases BM25 misses. Message embeddings are cached in the process by text, so a project's
messages are embedded once, not once per case.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict

import bm25s
import numpy as np
from openai import AsyncOpenAI

from service.text import STOPWORDS, stem_words

RRF_K = 60


_STOPWORDS = sorted(STOPWORDS)
_INDEXES: OrderedDict[str, MessageIndex] = OrderedDict()
INDEX_CACHE_SIZE = 256


def _tokens(texts: list[str]) -> list[list[str]]:
    tokenized = bm25s.tokenize(
        texts,
        stopwords=_STOPWORDS,
        stemmer=stem_words,
        return_ids=False,
        show_progress=False,
    )
    return [list(tokens) for tokens in tokenized]


class MessageIndex:
    """BM25 over one fixed list of messages (stemmed, stop words out). Built once per list and
    reused by every case whose candidates are the same list (a conversation's questions)."""

    def __init__(self, messages: list[tuple[str, str]]) -> None:
        self.ids = [mid for mid, _ in messages]
        self._retriever = bm25s.BM25()
        corpus = _tokens([text for _, text in messages])
        self._empty = not any(corpus)
        if not self._empty:
            self._retriever.index(corpus, show_progress=False)

    def rank(self, query: str, k: int) -> list[str]:
        """Ids of the ``k`` best matches (score > 0), best first; ties by id, so the order never
        depends on the order the messages were read in."""
        if self._empty or not self.ids:
            return []
        words = _tokens([query])[0]
        known = [w for w in words if w in self._retriever.vocab_dict]
        if not known:
            return []
        scores = self._retriever.get_scores(known)
        ranked = sorted((-float(s), mid) for mid, s in zip(self.ids, scores, strict=True) if s > 0)
        return [mid for _, mid in ranked[:k]]


def message_index(messages: list[tuple[str, str]]) -> MessageIndex:
    """The index of exactly these messages, from the process's cache when it was built before."""
    digest = hashlib.blake2b(digest_size=16)
    for mid, text in sorted(messages):
        digest.update(mid.encode() + b"\0" + text.encode() + b"\1")
    key = digest.hexdigest()
    index = _INDEXES.get(key)
    if index is None:
        index = _INDEXES[key] = MessageIndex(sorted(messages))
        while len(_INDEXES) > INDEX_CACHE_SIZE:
            _INDEXES.popitem(last=False)
    _INDEXES.move_to_end(key)
    return index


def rank_messages(messages: list[tuple[str, str]], query: str, k: int) -> list[str]:
    """Ids of the ``k`` messages that best match ``query`` by BM25, best first (matches only)."""
    return message_index(messages).rank(query, k) if messages else []


def fuse(rankings: list[list[str]], k: int) -> list[str]:
    """Reciprocal-rank fusion of several rankings of ids; the ``k`` best."""
    score: dict[str, float] = {}
    for ranking in rankings:
        for rank, item in enumerate(ranking):
            score[item] = score.get(item, 0.0) + 1.0 / (RRF_K + rank + 1)
    return sorted(score, key=lambda item: -score[item])[:k]


class EndpointEmbedder:
    """Embeddings from an OpenAI-compatible ``/embeddings`` endpoint, cached by text."""

    def __init__(
        self, *, base_url: str, api_key: str, model: str, timeout_s: float, cache_size: int = 50_000
    ) -> None:
        self.model = model
        self._client = AsyncOpenAI(base_url=base_url, api_key=api_key, timeout=timeout_s)
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._cache_size = cache_size

    async def embed(self, texts: list[str]) -> np.ndarray:
        """Unit-length vectors, one row per text."""
        keys = [hashlib.blake2b(t.encode(), digest_size=16).hexdigest() for t in texts]
        missing = sorted(
            {
                key: text for key, text in zip(keys, texts, strict=True) if key not in self._cache
            }.items()
        )
        for start in range(0, len(missing), 256):
            chunk = missing[start : start + 256]
            response = await self._client.embeddings.create(
                model=self.model, input=[text for _, text in chunk]
            )
            for (key, _), item in zip(chunk, response.data, strict=True):
                vector = np.asarray(item.embedding, dtype=np.float32)
                self._cache[key] = vector / (np.linalg.norm(vector) or 1.0)
        for key in keys:
            self._cache.move_to_end(key)
        while len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)
        return np.stack([self._cache[key] for key in keys])

    async def aclose(self) -> None:
        """Close the HTTP client (its connections belong to the loop it was used in)."""
        await self._client.close()

    async def rank(self, messages: list[tuple[str, str]], query: str, k: int) -> list[str]:
        """Ids of the ``k`` messages closest to ``query``, best first."""
        vectors = await self.embed([text for _, text in messages] + [query])
        similarity = vectors[:-1] @ vectors[-1]
        order = sorted(range(len(messages)), key=lambda i: (-float(similarity[i]), messages[i][0]))
        return [messages[i][0] for i in order[:k]]


async def search_messages(
    messages: list[tuple[str, str]], query: str, k: int, embedder: EndpointEmbedder | None
) -> list[str]:
    """BM25, fused with the dense ranking when an embedder is configured."""
    lexical = rank_messages(messages, query, k)
    if embedder is None or not messages:
        return lexical
    return fuse([lexical, await embedder.rank(messages, query, k)], k)
