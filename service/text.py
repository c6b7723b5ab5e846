"""Words as MemTrace compares them: one tokenizer, one stop-word list and one stemmer, shared by
evidence search (BM25), the heuristic judge and the audits, so that "adopted" meets "adoption"
and "two" meets "2" the same way wherever two texts are compared.

Stemming is Snowball English (PyStemmer, the stemmer bm25s supports). Number words up to
twenty, the tens to fifty, "hundred", "a" and "an" become digits before stemming; the stop-word
list keeps "a"/"an" out of content, so only a spelled-out number counts.
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


def content_tokens(text: str) -> set[str]:
    """Lower-cased words and numbers without stop words, stemmed."""
    return {stem(t) for t in TOKEN.findall(text.lower()) if t not in STOPWORDS}
