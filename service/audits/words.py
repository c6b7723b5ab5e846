"""The part of audit rules Cypher cannot do: comparing texts word by word.

An audit's filter (in its module) takes one candidate row from the audit's Cypher statement and
its parsed parameters, and returns the row to report (with its derived columns) or None to drop
it. Words are compared with ``service.text``'s rules, as evidence search and the judges compare
them (lower-cased, stop words dropped, stemmed), so "adopted" and "adopts" are the same word here
as in attribution.

A text *carries* an expected answer when it has at least ``min_answer_coverage`` percent of the
answer's content words. An answer without content words ("yes") cannot be checked this way:
every text carries it, and the audits fall back to the graph structure alone.
"""

from __future__ import annotations

from collections.abc import Iterable

from service.audits.models import AuditRow as Row
from service.text import NUMBER_WORDS, TOKEN, content_tokens


def public(row: Row) -> Row:
    """The row without the columns only filters read (named with a leading underscore)."""
    return {k: v for k, v in row.items() if not k.startswith("_")}


def content_words(text: str) -> list[str]:
    """The distinct content words of ``text``, lower-cased, in order."""
    words: list[str] = []
    for word in TOKEN.findall(text.lower()):
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
    """One needle per content word of the answer: a substring every word with the same stem
    contains, so "contains p% of the needles" (lower-cased) is a superset of "carries p% of the
    answer's words" that Cypher can test cheaply before the exact rule runs here."""
    return [_needle(s) for word in content_words(expected_answer) for s in content_tokens(word)]


def _needle(stem: str) -> str:
    """What every word stemming to ``stem`` contains. A Snowball stem is not always a prefix of
    its words: it may end in an ``i`` or ``e`` the word lacks (happy -> happi, hoping -> hope,
    dying -> die) or in ``bl`` where the word has ``bil`` (possibility -> possibl), so those
    endings are cut. A number is compared as its digits whether written "2" or "two": no
    substring is common to both, so its needle is empty (always contained). Checked on the
    23,684 distinct content words of LoCoMo and the Python standard library: no word lacks the
    needle of its own stem."""
    if stem in NUMBER_WORDS.values():
        return ""
    needle = stem.rstrip("eiy")
    return needle[:-1] if needle.endswith("bl") else needle


def carried(expected_answer: str, texts: Iterable[str], percent: int) -> list[str] | None:
    """The answer's words the texts share, when they carry ``percent`` of them; else None."""
    wanted = content_words(expected_answer)
    shared = words_shared(expected_answer, texts)
    return shared if len(shared) * 100 >= percent * len(wanted) else None
