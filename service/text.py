"""Words as MemTrace compares them: one tokenizer, one stop-word list and one stemmer, shared by
evidence search (BM25), the heuristic judge and the audits, so that "adopted" meets "adoption"
and "two" meets "2" the same way wherever two texts are compared.

Stemming is Snowball English (PyStemmer, the stemmer bm25s supports). Number words up to
twenty, the tens to fifty, "hundred", "a" and "an" become digits before stemming; the stop-word
list keeps "a"/"an" out of content, so only a spelled-out number counts.

A day written against its month or its ordinal suffix is the day and the month: "15April" is
"15" and "april", "15th" is "15", as "15 April" and "the 15" are (LoCoMo's answers write "The
week before 15April, 2022"; read as one word "15april", the date named nothing any turn said).
Other words of digits and letters stay whole ("item6", "5k", "gpt4"): an audit listing what an
update lost names them as written.
"""

from __future__ import annotations

import functools
import re

import Stemmer  # type: ignore[import-not-found]

TOKEN = re.compile(r"[a-z0-9]+")
STOPWORDS = frozenset(
    """a an the and or but if of at by for with about against between into through during before
    after above below to from up down in out on off over under again further then once here
    there when where why how all any both each few more most other some such no nor not only
    own same so than too very s t can will just don should now is are was were be been being
    have has had having do does did doing i me my myself we our ours you your yours he him his
    she her hers it its they them their theirs what which who whom this that these those am
    would could as also did does doing get got like really yeah oh okay ok so much many one
    thing things""".split()  # noqa: SIM905
)
NUMBER_WORDS = {
    w: str(i)
    for i, w in enumerate(
        [
            "zero",
            "one",
            "two",
            "three",
            "four",
            "five",
            "six",
            "seven",
            "eight",
            "nine",
            "ten",
            "eleven",
            "twelve",
            "thirteen",
            "fourteen",
            "fifteen",
            "sixteen",
            "seventeen",
            "eighteen",
            "nineteen",
            "twenty",
        ]
    )
}
NUMBER_WORDS.update(
    {"thirty": "30", "forty": "40", "fifty": "50", "hundred": "100", "a": "1", "an": "1"}
)

_STEMMER = Stemmer.Stemmer("english")


@functools.lru_cache(maxsize=65_536)
def stem(token: str) -> str:
    """One lower-cased token as compared: a number word as its digits, else its Snowball stem."""
    if token in NUMBER_WORDS and token not in ("a", "an"):
        return NUMBER_WORDS[token]
    return str(_STEMMER.stemWord(token))


def stem_words(tokens: list[str]) -> list[str]:
    """``stem`` over a list: the stemmer callback bm25s takes."""
    return [stem(t) for t in tokens]


_GLUED_DATE = re.compile(
    r"(\d+)(st|nd|rd|th|january|february|march|april|may|june|july|august|september|october"
    r"|november|december)"
)


def _words(token: str) -> tuple[str, ...]:
    """A token as words: a day glued to its month or ordinal suffix is split (module doc)."""
    glued = _GLUED_DATE.fullmatch(token)
    if glued is None:
        return (token,)
    day, rest = glued.groups()
    return (day,) if rest in ("st", "nd", "rd", "th") else (day, rest)


def content_tokens(text: str) -> set[str]:
    """Lower-cased words and numbers without stop words, stemmed."""
    words: set[str] = set()
    for t in TOKEN.findall(text.lower()):
        if t in STOPWORDS:
            continue
        if t[0].isdigit() and t[-1].isalpha():  # a glued date, an ordinal, "5k"
            words.update(_words(t))
        else:
            words.add(t)
    return {stem(w) for w in words}


SEGMENT = re.compile(r"(?:\n+|(?<=[.!?])\s+)")
"""Where a text splits into segments: line breaks, and sentence ends followed by space."""


def segments(text: str) -> list[str]:
    """The lines and sentences of ``text`` (the whole text when it has none)."""
    parts = [p for p in SEGMENT.split(text) if p.strip()]
    return parts or [text]


def _spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each segment of ``text``, in order."""
    out, start = [], 0
    for cut in SEGMENT.finditer(text):
        if text[start : cut.start()].strip():
            out.append((start, cut.start()))
        start = cut.end()
    if text[start:].strip():
        out.append((start, len(text)))
    return out or [(0, len(text))]


GAP = "[...]"
"""What stands where an excerpt leaves text out."""


def excerpt(text: str, wanted: str, limit: int) -> tuple[str, int]:
    """At most ``limit`` characters of ``text`` (plus gap marks): its segments sharing the most
    words with ``wanted`` (compared as :func:`content_tokens`), then their neighbours, each run
    of them verbatim and in the original order, :data:`GAP` where text is left out; and how
    many characters were left out.

    Why not the head: in a long unit (a conversation buffer, a context of many memories) the
    segment that matters can be anywhere, and a reader shown the first ``limit`` characters
    does not see it. A text that fits is returned whole; with nothing shared, or a best segment
    longer than ``limit`` on its own, the head is shown.
    """
    if len(text) <= limit:
        return text, 0
    spans = _spans(text)
    want = content_tokens(wanted)
    scores = [len(content_tokens(text[a:b]) & want) for a, b in spans]
    ranked = sorted((i for i in range(len(spans)) if scores[i]), key=lambda i: (-scores[i], i))
    chosen: set[int] = set()
    used = 0

    def take(i: int) -> None:
        nonlocal used
        size = spans[i][1] - spans[i][0] + 1
        if i not in chosen and used + size <= limit:
            chosen.add(i)
            used += size

    for i in ranked:
        take(i)
    for distance in range(1, len(spans)):  # then the context around what was chosen
        if used >= limit or not chosen:
            break
        for i in sorted(chosen):
            for j in (i - distance, i + distance):
                if 0 <= j < len(spans):
                    take(j)
    if not chosen or (ranked and ranked[0] not in chosen):
        head = text[:limit]
        return head, len(text) - len(head)
    runs: list[tuple[int, int]] = []  # character ranges of consecutive chosen segments
    for i in sorted(chosen):
        if runs and i - 1 in chosen:
            runs[-1] = (runs[-1][0], spans[i][1])
        else:
            runs.append(spans[i])
    pieces = [text[a:b] for a, b in runs]
    shown = f" {GAP} ".join(pieces)
    if runs[0][0] > 0:
        shown = f"{GAP} {shown}"
    return shown, len(text) - sum(len(p) for p in pieces)
