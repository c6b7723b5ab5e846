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

from service.models.audits import AuditRow as Row
from service.text import TOKEN, content_tokens


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
