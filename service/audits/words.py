"""The parts of audit rules Cypher cannot do: comparing texts word by word.

Each filter takes one candidate row from an audit's Cypher statement and the audit's parsed
parameters, and returns the row to report (with its derived columns) or None to drop it. Words
are compared the way the heuristic judge compares them (lower-cased, stop words dropped, lightly
stemmed), so "adopted" and "adopts" are the same word here as in attribution.

A text *carries* an expected answer when it has at least ``min_answer_coverage`` percent of the
answer's content words. An answer without content words ("yes") cannot be checked this way:
every text carries it, and the audits fall back to the graph structure alone.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from service.models.audits import AuditRow as Row
from service.text import content_tokens

_WORD = re.compile(r"[a-z0-9]+")


def public(row: Row) -> Row:
    """The row without the columns only filters read (named with a leading underscore)."""
    return {k: v for k, v in row.items() if not k.startswith("_")}


def content_words(text: str) -> list[str]:
    """The distinct content words of ``text``, lower-cased, in order."""
    words: list[str] = []
    for word in _WORD.findall(text.lower()):
        if content_tokens(word) and word not in words:
            words.append(word)
    return words


def words_missing(text: str, other: str) -> list[str]:
    """The content words of ``text`` that ``other`` does not have, in order."""
    kept = content_tokens(other)
    return [w for w in content_words(text) if not content_tokens(w) <= kept]


def words_shared(text: str, others: Iterable[str]) -> list[str]:
    """The content words of ``text`` that some text of ``others`` has too, in order."""
    have = set().union(*(content_tokens(o) for o in others))
    return [w for w in content_words(text) if content_tokens(w) <= have]


def answer_needles(expected_answer: str) -> list[str]:
    """One stem per content word of the answer. A text sharing a word with the answer (by
    ``words_shared``) contains that word's stem, lower-cased, as a substring, since stems are
    prefixes of their words: "contains p% of the needles" is a superset of "carries p% of the
    answer's words" that Cypher can test cheaply before the exact rule runs here."""
    return [stem for word in content_words(expected_answer) for stem in content_tokens(word)]


def carried(expected_answer: str, texts: Iterable[str], percent: int) -> list[str] | None:
    """The answer's words the texts share, when they carry ``percent`` of them; else None."""
    wanted = content_words(expected_answer)
    shared = words_shared(expected_answer, texts)
    return shared if len(shared) * 100 >= percent * len(wanted) else None


def lost_words(row: Row, params: Mapping[str, Any]) -> Row | None:
    """degraded_updates: keep an update whose new version lacks ``min_lost_words`` words or more
    of the old version's content."""
    lost = words_missing(row["_old_content"] or "", row["_new_content"] or "")
    if len(lost) < params["min_lost_words"]:
        return None
    return {**public(row), "lost_words": lost}


def memory_carries_answer(row: Row, params: Mapping[str, Any]) -> Row | None:
    """retrieval_misses: keep a memory that carries the expected answer while the contexts of
    the answer's lineage do not (then the retrieval did deliver it: a response fault)."""
    percent = params["min_answer_coverage"]
    expected = row["_expected_answer"] or ""
    words = carried(expected, [row["_content"] or ""], percent)
    if words is None:
        return None
    if percent and content_words(expected) and carried(expected, row["_texts"], percent):
        return None
    return {**public(row), "answer_words": words}


def versions_carry_answer(row: Row, params: Mapping[str, Any]) -> Row | None:
    """deleted_then_needed: keep the entry's versions that carry the expected answer, and the
    row when one is left."""
    expected = row["_expected_answer"] or ""
    versions: list[str] = []
    words: list[str] = []
    for version in row["_versions"]:
        shared = carried(expected, [version["content"] or ""], params["min_answer_coverage"])
        if shared is not None:
            versions.append(version["id"])
            words += [w for w in shared if w not in words]
    if not versions:
        return None
    return {**public(row), "versions": versions, "answer_words": words}
