"""Lineage by text: which recorded units an LLM call or a retrieval read.

An OpenAI chat call or a LangChain retriever receives plain text, not unit ids. When that text
contains the text of a unit the tracer recorded before (a memory put into the system prompt, a
retrieved document, an earlier completion), the call consumed that unit: ``TextIndex`` finds
them. It sees every unit the tracer records (``Tracer.unit_listeners``), keeps the newest unit
per distinct text, and matches the text as the tracer would store it (``Tracer.mask`` applied).

Limits, on purpose: only texts of at least ``min_chars`` characters are matched (short ones such
as "yes" would be found everywhere); the index holds the ``max_units`` newest texts, and a
lookup compares the text with each of them (fine for thousands, not for millions).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from weakref import WeakKeyDictionary

from memtrace_client.models import UnitIn
from memtrace_client.tracer import Tracer

NOT_INDEXED = "memtrace_not_indexed"
"""A unit attribute that keeps a unit out of the index (an embedding's record of its input)."""

_indexes: WeakKeyDictionary[Tracer, TextIndex] = WeakKeyDictionary()
_lock = threading.Lock()


class TextIndex:
    """The newest recorded unit for each distinct text, to find the units a text contains."""

    def __init__(self, tracer: Tracer, *, min_chars: int = 12, max_units: int = 10_000) -> None:
        self.tracer = tracer
        self.min_chars = min_chars
        self.max_units = max_units
        self._by_text: OrderedDict[str, str] = OrderedDict()
        self._lock = threading.Lock()
        tracer.unit_listeners.append(self.add)

    def add(self, unit: UnitIn) -> None:
        """Index ``unit`` (as recorded: masked) unless it is too short or marked not indexed."""
        text = unit.content.strip()
        if len(text) < self.min_chars or unit.attributes.get(NOT_INDEXED):
            return
        with self._lock:
            self._by_text.pop(text, None)
            self._by_text[text] = unit.id
            while len(self._by_text) > self.max_units:
                self._by_text.popitem(last=False)

    def unit_for(self, text: str) -> str | None:
        """The newest unit whose text is exactly ``text`` (after masking), if any."""
        with self._lock:
            return self._by_text.get(self.tracer.mask(text).strip())

    def units_in(self, text: str) -> list[str]:
        """Ids of the recorded units whose text ``text`` contains, oldest first."""
        haystack = self.tracer.mask(text)
        with self._lock:
            return [uid for known, uid in self._by_text.items() if known in haystack]


def index_of(tracer: Tracer) -> TextIndex:
    """The tracer's one ``TextIndex`` (made on first use), shared by every adapter on it."""
    with _lock:
        index = _indexes.get(tracer)
        if index is None:
            index = _indexes[tracer] = TextIndex(tracer)
        return index
