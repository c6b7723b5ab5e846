"""The ``heuristic`` judge: lexical evidence only, no network, deterministic.

A unit carries the information when one of its segments (lines or sentences) holds most of the
expected answer's content words, numbers and dates, and is about the question (shares some of its
words); or when it restates the evidence text closely. Scores near the thresholds come with low
confidence, so an LLM judge placed after this one is asked only about those.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from service.attribution.judges.base import Question, UnitText, Verdict
from service.attribution.models import Cost
from service.attribution.structured import as_text

_TOKEN = re.compile(r"[a-z0-9]+")
_SEGMENT = re.compile(r"(?:\n+|(?<=[.!?])\s+)")
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
_WH = frozenset({"what", "which", "who", "whom", "when", "where", "why", "how", "whose", "kind"})


def _stem(token: str) -> str:
    """A light stem so that "adopted"/"adopts"/"adoption", "dogs"/"dog", "named"/"name" meet."""
    for suffix in ("ing", "ion", "ed", "es", "ly", "s"):
        if len(token) > len(suffix) + 2 and token.endswith(suffix):
            token = token[: -len(suffix)]
            break
    return token[:-1] if len(token) > 3 and token.endswith("e") else token


def content_tokens(text: str) -> set[str]:
    """Lower-cased words and numbers without stop words, lightly stemmed."""
    return {_stem(t) for t in _TOKEN.findall(text.lower()) if t not in STOPWORDS}


def _segments(text: str) -> list[str]:
    parts = [p for p in _SEGMENT.split(text) if p.strip()]
    return parts or [text]


_MONTHS = frozenset(
    _stem(m)
    for m in [
        "january",
        "february",
        "march",
        "april",
        "may",
        "june",
        "july",
        "august",
        "september",
        "october",
        "november",
        "december",
        "monday",
        "tuesday",
        "wednesday",
        "thursday",
        "friday",
        "saturday",
        "sunday",
    ]
)


def _specific(tokens: set[str]) -> set[str]:
    """Numbers, dates and day names: an answer that names one is wrong without it."""
    return {t for t in tokens if t.isdigit() or t in _MONTHS}


_NAME = re.compile(r"\b[A-Z][a-zA-Z]+")


def _names(text: str) -> set[str]:
    """Capitalised words of the question (people, places), as content tokens."""
    return content_tokens(" ".join(_NAME.findall(text))) - _WH


def _recall(needed: set[str], have: set[str]) -> float:
    if not needed:
        return 0.0
    # Numbers (ages, years, counts, days) decide many answers: they weigh double.
    weight = {t: 2.0 if t.isdigit() else 1.0 for t in needed}
    return sum(w for t, w in weight.items() if t in have) / sum(weight.values())


@dataclass
class HeuristicJudge:
    """Lexical judge. ``threshold`` is the carry score; ``margin`` the band of low confidence."""

    threshold: float = 0.5
    margin: float = 0.2
    kind: str = "heuristic"
    model: str | None = None
    cost: Cost = field(default_factory=Cost)

    def score(self, question: Question, content: str) -> float:
        """0..1: how well the best segment of ``content`` carries the answer to ``question``."""
        answer = content_tokens(question.expected_answer)
        asked = content_tokens(question.question) - _WH
        specific = _specific(answer - asked)
        names = _names(question.question)
        # Words of the wrong answer that neither the question nor the right answer has: a
        # segment stating them (and not the right answer) is where the wrong answer came from.
        wrong = content_tokens(question.wrong_answer) - asked - answer
        evidence = [content_tokens(as_text(t)) for t in question.evidence_texts]
        content = as_text(content)  # JSON snapshots and lists of memories read as their text
        best = 0.0
        evidence_tokens = set().union(*evidence) if evidence else set()
        for segment in _segments(content):
            have = content_tokens(segment)
            if not have:
                continue
            about = _recall(asked, have)
            # The answer's own words (those the question does not already contain).
            carried = _recall(answer - asked, have) if answer - asked else _recall(answer, have)
            # A segment missing a number or date the answer names states something else; one
            # about other people than those the question names is about something else.
            named = len(names & have) / len(names) if names else 1.0
            stated = 0.5 ** len(specific - have) * (0.25 + 0.75 * named)
            if wrong and wrong <= have and carried < 1.0:
                stated *= 0.25
            best = max(best, stated * carried * min(1.0, 0.4 + about))
            if evidence:
                # A close restatement of the evidence carries it, even paraphrased and even when
                # the answer is not spelled out (dates resolved from a session's timestamp, say).
                # Only what the evidence itself said can be missing from a restatement.
                restated = max(len(ev & have) / max(1, min(len(ev), len(have))) for ev in evidence)
                kept = 0.5 ** len(specific & evidence_tokens - have) * (0.5 + 0.5 * named)
                if wrong and wrong <= have and carried < 1.0:
                    kept *= 0.25
                best = max(best, kept * restated * min(1.0, 0.4 + about + 0.6 * carried))
        return round(best, 4)

    def verdict(self, question: Question, content: str) -> Verdict:
        s = self.score(question, content)
        distance = abs(s - self.threshold)
        confidence = min(1.0, 0.5 + distance / (2 * self.margin))
        return Verdict(
            carries=s >= self.threshold, confidence=round(confidence, 3), source="heuristic"
        )

    async def judge(self, question: Question, units: list[UnitText]) -> dict[str, Verdict]:
        return {u.id: self.verdict(question, u.content) for u in units}
