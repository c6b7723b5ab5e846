"""The ``heuristic`` judge: lexical evidence only, no network, deterministic.

A unit carries the information when one of its segments (lines or sentences) holds most of the
expected answer's content words, numbers and dates, and is about the question (shares some of its
words); or when it restates the evidence text closely. Scores near the thresholds come with low
confidence, so an LLM judge placed after this one is asked only about those.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from datetime import UTC, date, datetime
from itertools import zip_longest

from service.attribution.judges.base import Question, UnitText, Verdict
from service.attribution.judges.dates import MONTHS, WEEKDAYS, resolved_words
from service.attribution.structured import as_text
from service.llm.models import Cost
from service.text import content_tokens, segments, stem

_WH = frozenset({"what", "which", "who", "whom", "when", "where", "why", "how", "whose", "kind"})


_MONTHS = frozenset(stem(m) for m in [*MONTHS, *WEEKDAYS])


def _specific(tokens: set[str]) -> set[str]:
    """Numbers, dates and day names: an answer that names one is wrong without it."""
    return {t for t in tokens if t.isdigit() or t in _MONTHS}


_WHEN = re.compile(r"\bwhen\b", re.IGNORECASE)
_DATE_WORDS = (
    frozenset(
        stem(w)
        for w in [*MONTHS, *WEEKDAYS, "week", "weekend", "month", "year", "day", "before", "after"]
    )
    | frozenset(str(i) for i in range(1, 32))
    | frozenset(str(y) for y in range(1900, 2100))
)
_OWN_DAY = frozenset({"message", "memory"})
OWN_DAY_EVENT = 0.5
"""The share of the question's event words (its words other than names: "open", "online",
"clothing", "store" of "When did Gina open her online clothing store?") a segment needs before
the day it was said or written counts as the event's date. Any line naming the person said on
that day ("Jon finds Gina's success inspiring") is not about the event. Tune half, heuristic,
no hints, op accuracy: rewrite 0.663 -> 0.680, locomo 0.718 -> 0.728, rag 0.782 -> 0.786,
long-context 0.775 -> 0.777, shared 0.748 -> 0.755 (0.3 and 0.7 gained less); with every case
hinted none fell."""


def _day_words(when: datetime) -> frozenset[str]:
    return frozenset({str(when.day), stem(MONTHS[when.month - 1]), str(when.year)})


_NAME = re.compile(r"\b[A-Z][a-zA-Z]+")


def _names(text: str) -> set[str]:
    """Capitalised words (people, places, titles), as content tokens."""
    return content_tokens(" ".join(_NAME.findall(text))) - _WH


def _recall(
    needed: AbstractSet[str], have: AbstractSet[str], heavy: AbstractSet[str] = frozenset()
) -> float:
    if not needed:
        return 0.0
    # Numbers, dates and names decide many answers: they weigh double.
    weight = {t: 2.0 if (t.isdigit() or t in heavy) else 1.0 for t in needed}
    return sum(w for t, w in weight.items() if t in have) / sum(weight.values())


@dataclass(frozen=True)
class _Need:
    """What a carrier must state, computed once per question."""

    answer: frozenset[str]  # the answer's own words (those the question does not already have)
    specific: frozenset[str]  # its numbers, dates and names: each one missing counts hard
    asked: frozenset[str]  # the question's words: what a segment must be about
    names: frozenset[str]  # the people and places the question names
    when: frozenset[str]  # the numbers and dates the question itself names ("in November 2019")
    wrong: frozenset[str]  # words only the wrong answer has
    # per evidence text: the words of its answering segment, and the dates it said relatively
    key: tuple[tuple[frozenset[str], frozenset[str]], ...]
    said: frozenset[str] = frozenset()  # every word of every evidence text
    asks_date: bool = False  # "when ...?" answered by a date alone
    event: frozenset[str] = frozenset()  # the question's words other than its names


def _words(segment: str, when: datetime | None) -> set[str]:
    """A segment's words, with the dates it states relative to ``when`` resolved."""
    return set(_segment_words(segment, when.date() if when else None))


@functools.lru_cache(maxsize=65_536)
def _segment_words(segment: str, day: date | None) -> frozenset[str]:
    # cached: a buffer rewritten every session repeats most of its lines in every version
    when = datetime(day.year, day.month, day.day, tzinfo=UTC) if day else None
    return frozenset(content_tokens(segment) | _resolved(segment, when))


@functools.lru_cache(maxsize=65_536)
def _plain_words(segment: str) -> tuple[frozenset[str], frozenset[str]]:
    """A segment's words, and those of them that are numbers, dates or names."""
    words = frozenset(content_tokens(segment))
    return words, frozenset(_specific(set(words)) | (_names(segment) & words))


DERIVED_WORDS = 6
DERIVED_SHARE = 0.7
DERIVED_SCORE = 0.6


def _derived(words: tuple[frozenset[str], frozenset[str]], said: frozenset[str]) -> float:
    """A segment made almost only of the evidence's own words was written from the evidence:
    a memory an extractor took from that message, the message kept in a buffer or a chunk.
    What the dataset's labels and a reader count as carrying it, even when the answer itself
    is paraphrased away ("Melanie's family visited the Grand Canyon" from the turn about her
    family after the accident). Short segments ("Yes, Caroline!") say too little to tell, and
    a copy naming a number, date or name the evidence does not ("... in November 2023" for
    "... in November 2012", "moved to Porto" for "moved to Budapest") changed the fact."""
    plain, specific = words
    if len(plain) < DERIVED_WORDS or not specific <= said:
        return 0.0
    share = len(plain & said) / len(plain)
    return DERIVED_SCORE if share >= DERIVED_SHARE else 0.0


def _date_left_out(answer: frozenset[str], plain: frozenset[str], said: frozenset[str]) -> bool:
    """An answer that is only a number or date ("12 May 2021"), named by the evidence (``said``)
    and not by the segment: a copy written from the evidence without it lost exactly what was
    asked (an extraction that drops dates), so being written from the evidence does not make it
    carry. That holds for a context's line too, though a pipeline may show each memory's time
    beside it: the time of a memory written after the event is not the event's date.

    A copy of evidence that gave the date only relatively ("I went yesterday") or not at all
    (the day it was said) lost nothing the evidence stated: "Caroline attended the support
    group recently", written that day, is as good as its source."""
    return (
        bool(answer)
        and answer == _specific(set(answer))
        and bool(answer & said)
        and not answer & plain
    )


def _resolved(segment: str, when: datetime | None) -> set[str]:
    return {stem(w) for w in resolved_words(segment, when)}


def _key_segment(
    text: str, answer: set[str], when: datetime | None
) -> tuple[frozenset[str], frozenset[str]]:
    """The words of the evidence segment that best states the answer (the whole evidence when
    no segment states any of it: the answer is inferred), and the date words it only states
    relative to when it was said ("yesterday")."""
    parts = segments(text)
    said = [_words(seg, when) for seg in parts]
    if not said:
        return frozenset(), frozenset()
    scores = [_recall(answer, seg) for seg in said]
    best = max(range(len(said)), key=lambda i: (scores[i], -i))
    if scores[best] == 0.0:
        return frozenset(set().union(*said)), frozenset()
    relative = _resolved(parts[best], when) - content_tokens(parts[best])
    return frozenset(said[best]), frozenset(relative)


PASSAGE_SEGMENTS = 4
PASSAGE_TOPIC = 0.5


class _Passage:
    """The passages of a unit longer than one: each segment with the ``PASSAGE_SEGMENTS``
    segments either side (a turn and the turns around it, a paragraph).

    A long unit (a conversation buffer, a context of many retrieved lines, a document) holds many
    unrelated segments, so a segment sharing the answer's words says the answer only when the
    question's own words (beyond the names: two speakers name each other in every other line)
    are near it, in its passage. A segment whose passage is about something else matched by
    chance: "Do your research and find an adoption agency" is not "researching adoption agencies"
    as Caroline's summer plans unless the summer or her plans are nearby."""

    def __init__(self, words: list[set[str]], need: _Need) -> None:
        self.words = words
        self.asked = need.event

    def topic(self, i: int) -> float:
        """0..1: how much segment ``i``'s carry counts, by its passage's share of the question's
        words (full from ``PASSAGE_TOPIC`` on)."""
        if not self.asked:
            return 1.0
        near: set[str] = set()
        for seg in self.words[max(0, i - PASSAGE_SEGMENTS) : i + PASSAGE_SEGMENTS + 1]:
            near |= seg
        return min(1.0, _recall(self.asked, near) / PASSAGE_TOPIC)


LONG_UNIT_SEGMENTS = 50
LONG_UNIT_CARRIES = 0.75
"""A "carries" found in a unit of more than ``LONG_UNIT_SEGMENTS`` lines and sentences (a
conversation buffer, a long document) is less sure: the more segments, the likelier one of them
shares the answer's words by chance, and the likelier the segment that said it is the one an
update cut away. Below the ``llm`` judge's line (0.8), so the LLM is asked about it."""


LONG_MEMORY_LINE = 0.75
"""The carry score a memory of more than ``LONG_UNIT_SEGMENTS`` segments (a conversation
buffer, a dump of a store) needs, instead of the judge's ``threshold``. When such a memory still
holds the evidence it mostly holds it verbatim, which the walk settles before asking the judge
(``walk.holds_copy``); one that does not and shares some of the answer's words has mostly kept
another turn that shares them, or a line an update cut the fact from. Below the line it is an
unsure "no" (0.5), so that an ``llm`` judge asks the LLM. Tune half, heuristic, no hints:
long-context 0.740 -> 0.775 (0.772 at a line of 0.7, 0.780 at 0.95 and above); rewrite,
observations, RAG and the shared project unchanged. A context that long is not held to it: on
RAG (long retrieved contexts) that lost 0.05."""


def verdict_confidence(carries: bool, score: float, topic: float, parts: int = 1) -> float:
    """How often a verdict like this one is right: the share of verdicts with this score and
    topic that agreed with the oracle on the LoCoMo tuning half (conversations 0-4; 13,000
    verdicts, ``python -m benchmarks.attribution tune --judges verdicts``), rounded down.

    A unit that shares nothing with the question is surely not a carrier (0.99). A unit about
    the question that lacks the answer's words is one a paraphrase may still carry (0.55-0.9).
    A carrier by words is right at most 0.85 of the time: another message stating the same
    fact, or a segment sharing the answer's words but not its meaning. The ``llm`` judge asks
    the LLM about every verdict below ``MEMTRACE_LLM_HEURISTIC_CONFIDENCE`` (0.8), and about
    every context (``judges.llm.ALWAYS_ASKED_KINDS``).
    """
    if carries:
        if score >= 0.7 and topic >= 0.6:
            return 0.82 if parts <= LONG_UNIT_SEGMENTS else LONG_UNIT_CARRIES
        return 0.6 if score >= 0.7 or topic >= 0.9 else 0.5
    if topic >= 0.9:
        return 0.55
    if topic >= 0.8:
        return 0.9 if score < 0.2 else 0.65
    if score >= 0.35:
        return 0.9 if topic < 0.6 else 0.65
    if score >= 0.2:
        return 0.9 if topic < 0.8 else 0.7
    return 0.99


_Score = tuple[float, float, int]  # carry score, topic, segments (``HeuristicJudge._assess``)
SCORED_QUESTIONS = 4


class HeuristicJudge:
    """Lexical judge. ``threshold`` is the carry score; confidence: :func:`verdict_confidence`.

    A unit carries the information when one of its segments (a line or sentence, read with its
    neighbours) states the expected answer's own words, numbers and dates (after stemming,
    number words and dates resolved against the unit's time) and is about the question. Sharing
    the question's topic is not enough: the answer must be there. Only when the evidence itself
    does not spell the answer out (it is inferred, or a date said relatively) does a close
    restatement of the evidence count instead.
    """

    kind = "heuristic"
    model: str | None = None

    def __init__(self, threshold: float = 0.5) -> None:
        self.threshold = threshold
        self.cost = Cost()
        self._needs: dict[Question, _Need] = {}
        # scores by question and unit text, for the last few questions (a case asks with and
        # without its evidence's text): a judge at another line (``at_line``) shares them, so
        # that a second reading of a case scores nothing twice
        self._scores: dict[Question, dict[tuple[str, datetime | None, str], _Score]] = {}

    def at_line(self, threshold: float) -> HeuristicJudge:
        """This judge with another carry line, sharing the scores it has computed."""
        other = HeuristicJudge(threshold)
        other._scores = self._scores
        return other

    def _scored(self, question: Question, content: str, when: datetime | None, kind: str) -> _Score:
        scores = self._scores.get(question)
        if scores is None:
            if len(self._scores) >= SCORED_QUESTIONS:
                del self._scores[next(iter(self._scores))]  # the oldest question's
            scores = self._scores[question] = {}
        key = (content, when, kind)
        got = scores.get(key)
        if got is None:
            got = scores[key] = self._assess(question, content, when, kind)
        return got

    def _need(self, question: Question) -> _Need:
        need = self._needs.get(question)
        if need is None:
            asked = content_tokens(question.question) - _WH
            answer = content_tokens(question.expected_answer)
            own = answer - asked or answer
            names = _names(question.expected_answer) & own
            need = _Need(
                answer=frozenset(own),
                specific=frozenset(_specific(own) | names),
                asked=frozenset(asked),
                names=frozenset(_names(question.question)),
                when=frozenset(_specific(asked)),
                wrong=frozenset(content_tokens(question.wrong_answer) - asked - answer),
                key=tuple(
                    _key_segment(as_text(t), own, when)
                    for t, when in zip_longest(question.evidence_texts, question.evidence_times)
                    if t is not None
                ),
                said=frozenset(
                    w for t in question.evidence_texts for w in content_tokens(as_text(t))
                ),
                asks_date=bool(_WHEN.search(question.question))
                and bool(own)
                and own <= _DATE_WORDS,
                event=frozenset(asked - _names(question.question)),
            )
            self._needs = {question: need}  # one question per case: keep only the last
        return need

    def score(
        self, question: Question, content: str, when: datetime | None = None, kind: str = ""
    ) -> float:
        """0..1: how well the best segment of ``content`` carries the answer to ``question``."""
        return self.assess(question, content, when, kind)[0]

    def assess(
        self, question: Question, content: str, when: datetime | None = None, kind: str = ""
    ) -> tuple[float, float]:
        """The carry score and topic of :meth:`_assess`."""
        best, topic, _ = self._assess(question, content, when, kind)
        return best, topic

    def _assess(
        self, question: Question, content: str, when: datetime | None = None, kind: str = ""
    ) -> tuple[float, float, int]:
        """How well the best segment of ``content`` carries the answer to ``question`` (0..1),
        and how much of it is about the question at all (0..1: the best segment's share of the
        question's and the evidence's words, answer aside).

        A memory restating the evidence's event carries a date the evidence resolved
        from its own time (a memory is dated by when it was written; a source message must say
        the date itself or relative to when it was said).
        """
        need = self._need(question)
        # JSON snapshots and lists of memories (imported execution graphs) read as their text
        parts = segments(as_text(content))
        words = [_words(seg, when) for seg in parts]
        segment_words = [_plain_words(seg) for seg in parts]
        dated = kind == "memory"
        # "when did ...?": a message or memory telling of the event without naming a date
        # tells it on the day it was said or written (LoCoMo answers with that day).
        today = _day_words(when) if need.asks_date and kind in _OWN_DAY and when else frozenset()
        best = topic = 0.0
        passage = _Passage(words, need) if len(parts) > 2 * PASSAGE_SEGMENTS + 1 else None
        for i, have in enumerate(words):
            if not have:
                continue
            carry = 0.0  # this segment's carry score
            around = (
                have
                | (words[i - 1] if i else set())
                | (words[i + 1] if i + 1 < len(words) else set())
            )
            own_day = (
                bool(today)
                and not _specific(have)
                and (not need.event or _recall(need.event, around) >= OWN_DAY_EVENT)
            )
            if own_day:
                have = have | today
                around = around | today
            # the topic without the names (those count in ``named``): a memory often leaves out
            # the user's own name ("Works as a nurse" for Alice)
            about = max(
                _recall(need.asked, around, need.names),
                _recall(need.event, around) if need.event else 1.0,
            )
            named = len(need.names & around) / len(need.names) if need.names else 1.0
            carried = _recall(need.answer, have, need.specific)
            missing = len(need.specific - have)
            # a segment stating other dates than the one the question asks about tells of
            # another event ("started at Nakatomi in July 2022" for "in November 2019")
            other_event = bool(need.when - around) and bool(
                _specific(have) - need.when - need.answer
            )
            stated = 0.5 ** (missing + 2 * other_event) * (0.6 + 0.4 * named)
            if need.wrong and need.wrong <= have and carried < 1.0:
                stated *= 0.25
            said = stated * carried * min(1.0, 0.5 + about)
            if own_day:  # a date only implied: carried, never surely (the LLM is asked)
                said = min(said, DERIVED_SCORE)
            carry = max(carry, said)
            topic = max(topic, about * (0.6 + 0.4 * named))
            for key, relative in need.key:
                # A restatement of the evidence's answering segment carries what it says, even
                # paraphrased or with the answer left implicit (a date said relatively). Its
                # answer words weigh triple, names and numbers double: "Alice has a sister"
                # does not restate "my sister Emma lives in Denver".
                weight = {
                    t: 0.0
                    if dated and t in relative
                    else 3.0
                    if t in need.answer
                    else 2.0
                    if t in need.specific or t.isdigit()
                    else 1.0
                    for t in key
                }
                total = sum(weight.values())
                if not total:
                    continue
                restated = sum(w for t, w in weight.items() if t in around) / total
                topic = max(topic, restated)
                # ... but a copy that lost the answer itself (or its number, date or name)
                # restates the topic, not the fact.
                stated_answer = need.answer & key
                specific = need.specific & key
                if dated:  # written when it was said: its time carries what "yesterday" meant
                    stated_answer -= relative
                    specific -= relative
                if stated_answer:
                    kept = len(stated_answer & around) / len(stated_answer)
                    restated *= 1.0 if kept >= 0.5 else kept
                restated *= 0.5 ** len(specific - around)
                carry = max(carry, restated * (0.6 + 0.4 * named) * min(1.0, 0.5 + about))
            if need.said and not _date_left_out(need.answer, segment_words[i][0], need.said):
                carry = max(carry, _derived(segment_words[i], need.said))
            if passage is not None and carry > best:
                carry *= passage.topic(i)
            best = max(best, carry)
        return round(best, 4), round(topic, 4), len(parts)

    def verdict(
        self, question: Question, content: str, when: datetime | None = None, kind: str = ""
    ) -> Verdict:
        s, topic, parts = self._scored(question, content, when, kind)
        if (
            kind == "memory"
            and parts > LONG_UNIT_SEGMENTS
            and self.threshold <= s < LONG_MEMORY_LINE
        ):
            return Verdict(False, 0.5, "heuristic", score=s)
        carries = s >= self.threshold
        confidence = verdict_confidence(carries, s, topic, parts)
        return Verdict(carries, confidence, "heuristic", score=s)

    async def judge(self, question: Question, units: list[UnitText]) -> dict[str, Verdict]:
        return {u.id: self.verdict(question, u.content, u.ts, u.kind) for u in units}
