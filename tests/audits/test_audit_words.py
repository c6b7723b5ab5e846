"""The audits' Cypher pre-filter (``$needles``) must never drop a memory the service's rule keeps:
every text that carries an answer by ``words.carried`` contains each of the answer's needles, as
``toLower(content) CONTAINS needle`` tests it in cypher/audits/retrieval_misses and
deleted_then_needed."""

from __future__ import annotations

import pytest

from service.audits.words import answer_needles, carried

# (expected answer, a memory carrying it in another form): Snowball stems are not always
# prefixes of the words they come from (happy -> happi, hoping -> hope, dying -> die), and a
# number word is compared as its digits (two -> 2).
CARRIED = [
    ("happy", "She was happy that day"),
    ("happiness", "She was happy that day"),
    ("studies", "He will study law"),
    ("possibility", "Moving is possible"),
    ("hopes", "She was hoping for a dog"),
    ("dying", "The plant is dying"),
    ("2", "She has two dogs"),
    ("two", "She has 2 dogs"),
    ("Adopted a dog", "She adopts dogs"),
]


@pytest.mark.parametrize(("answer", "memory"), CARRIED)
def test_a_memory_that_carries_the_answer_passes_the_prefilter(answer: str, memory: str) -> None:
    assert carried(answer, [memory], 100) is not None  # the service's rule keeps it
    missing = [n for n in answer_needles(answer) if n not in memory.lower()]
    assert missing == [], f"the Cypher pre-filter would drop {memory!r} for {answer!r}"


def test_needles_still_filter() -> None:
    """A memory sharing no word with the answer fails the pre-filter (it is worth running)."""
    needles = answer_needles("Adopted a dog")
    assert needles
    assert not all(n in "she went hiking in the mountains" for n in needles)
