"""A small Okapi BM25 (stdlib only), so retrieval in the datasets is a real ranking, not a stub.

Tokens are ``[a-z0-9]+`` of the lower-cased text; ``idf = ln(1 + (N - n + 0.5) / (n + 0.5))``
(the non-negative form used by Lucene), so a term found in most documents still scores >= 0.
Ties are broken by document order, which keeps every ranking deterministic.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence

_TOKEN = re.compile(r"[a-z0-9]+")


def tokenize(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


class BM25:
    """Okapi BM25 over a fixed list of documents, with an inverted index for fast queries."""

    def __init__(self, documents: Sequence[str], k1: float = 1.5, b: float = 0.75) -> None:
        self.k1 = k1
        self.b = b
        self._lengths = [len(tokenize(doc)) for doc in documents]
        self._avg = (sum(self._lengths) / len(documents)) if documents else 0.0
        self._postings: dict[str, list[tuple[int, int]]] = {}
        for index, doc in enumerate(documents):
            for term, tf in Counter(tokenize(doc)).items():
                self._postings.setdefault(term, []).append((index, tf))
        total = len(documents)
        self._idf = {
            term: math.log(1.0 + (total - len(p) + 0.5) / (len(p) + 0.5))
            for term, p in self._postings.items()
        }

    def __len__(self) -> int:
        return len(self._lengths)

    def scores(self, query: str) -> list[float]:
        """The score of every document for ``query``; a repeated query term adds its score again."""
        result = [0.0] * len(self._lengths)
        for term in tokenize(query):
            idf = self._idf.get(term)
            if idf is None:
                continue
            for index, tf in self._postings[term]:
                norm = self.k1 * (1.0 - self.b + self.b * self._lengths[index] / (self._avg or 1.0))
                result[index] += idf * tf * (self.k1 + 1.0) / (tf + norm)
        return result

    def rank(self, query: str) -> list[int]:
        """Indices of all documents, best first; equal scores keep document order."""
        scores = self.scores(query)
        return sorted(range(len(scores)), key=lambda i: (-scores[i], i))

    def top(self, query: str, k: int) -> list[int]:
        return self.rank(query)[:k]
