"""Plan a synthetic multi-session conversation: who says which fact when, and what is asked.

The plan is system-agnostic. Each question carries the scenario it will exercise (``None`` for a
case that should pass, else the error type to inject); the system pipelines turn the plan into a
trace and inject the faults. Facts that a later fault needs (an update or delete that destroys the
fact) are placed before the last session, with a related follow-up turn in a later session.
"""

from __future__ import annotations

import random
from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime, timedelta
from itertools import islice
from typing import Literal

from .facts import FILLER, OPENERS, Fact, fact_stream, hobby, people
from .labels import ErrorType

EventKind = Literal["merge", "retract", "repeat"]


@dataclass(frozen=True)
class Event:
    """How a turn relates to an earlier memory: adds to it, retracts it, or repeats it."""

    kind: EventKind
    related: str  # statement of the earlier fact


@dataclass(frozen=True)
class Turn:
    speaker: str
    text: str
    statement: str | None = None  # the fact this turn states, in third person
    person: str | None = None  # whom the fact is about
    event: Event | None = None

    @property
    def line(self) -> str:
        """The message as it enters a trace: ``Speaker: text``."""
        return f"{self.speaker}: {self.text}"


@dataclass(frozen=True)
class Question:
    fact: Fact
    scenario: ErrorType | None  # None: every operation works and the case passes
    variant: int  # 0/1: which flavour of the fault (e.g. drop vs corrupt)
    session: int
    turn: int  # index of the stating turn in its session
    follow_up_session: int | None  # session of the later turn related to this fact
    with_evidence: bool


@dataclass(frozen=True)
class Conversation:
    speakers: tuple[str, str]
    sessions: list[list[Turn]]
    questions: list[Question]
    start: datetime

    def session_start(self, index: int) -> datetime:
        return self.start + timedelta(days=3 * index)

    def question_time(self) -> datetime:
        return self.session_start(len(self.sessions)) + timedelta(days=1)


@dataclass
class _Placed:
    session: int
    turn: Turn
    question: int | None = None


def _say(
    rng: random.Random,
    speakers: tuple[str, str],
    statement: str,
    person: str,
    event: Event | None = None,
) -> Turn:
    return Turn(rng.choice(speakers), rng.choice(OPENERS) + statement, statement, person, event)


def plan_conversation(
    rng: random.Random,
    scenarios: list[ErrorType | None],
    *,
    n_sessions: int,
    n_distractors: int,
    needs_follow_up: Collection[ErrorType],
    evidence_fraction: float = 0.5,
    start: datetime,
) -> Conversation:
    """Lay out target facts, distractors, side events and chit-chat over ``n_sessions`` sessions.

    ``needs_follow_up`` lists the scenarios whose fault happens in a later session (a destructive
    update or delete); about a third of the other stored targets also get a harmless follow-up,
    so a later update touching a target is not by itself a sign of a fault.
    """
    if n_sessions < 2:
        raise ValueError("n_sessions must be at least 2 (updates and deletes need a later session)")
    persons = people(rng)
    speakers = (persons[0], persons[1])
    subjects = persons[2:]
    facts = list(islice(fact_stream(rng, subjects), len(scenarios) + n_distractors))
    if len(facts) < len(scenarios) + n_distractors:
        raise ValueError(f"at most {len(facts) - len(scenarios)} distractors are available")
    last = n_sessions - 1
    placed: list[_Placed] = []
    follow_ups: list[int | None] = []
    hobby_people = iter(subjects[::-1])
    hobby_retractions: dict[str, str] = {}

    def follow(session: int, related: str, person: str, kind: EventKind) -> int:
        """Place a later turn about ``related``: a side fact, its retraction, or a repeat."""
        later = rng.randint(session + 1, last)
        if kind == "merge":
            text = hobby(rng, person)[0]
        elif kind == "retract":
            text = hobby_retractions[related]
        else:
            text = related
        placed.append(_Placed(later, _say(rng, speakers, text, person, Event(kind, related))))
        return later

    for index, (fact, scenario) in enumerate(zip(facts, scenarios, strict=False)):
        destroyed = scenario in needs_follow_up
        merged = destroyed or (scenario != "ExtractionError" and rng.random() < 1 / 3)
        session = rng.randint(0, last - 1 if merged else last)
        placed.append(_Placed(session, _say(rng, speakers, fact.statement, fact.person), index))
        follow_ups.append(follow(session, fact.statement, fact.person, "merge") if merged else None)
    distractors = facts[len(scenarios) :]
    for number, fact in enumerate(distractors):
        session = rng.randint(0, last)
        placed.append(_Placed(session, _say(rng, speakers, fact.statement, fact.person)))
        if session < last and number % 10 == 1:
            follow(session, fact.statement, fact.person, "merge")
        elif session < last and number % 20 == 3:
            follow(session, fact.statement, fact.person, "repeat")
    for _ in range(n_distractors // 10):
        person = next(hobby_people)
        statement, retraction = hobby(rng, person)
        session = rng.randint(0, last)
        placed.append(_Placed(session, _say(rng, speakers, statement, person)))
        if session < last and rng.random() < 0.5:
            hobby_retractions[statement] = retraction
            follow(session, statement, person, "retract")
    return _assemble(
        rng, speakers, placed, scenarios, facts, follow_ups, n_sessions, evidence_fraction, start
    )


def _assemble(
    rng: random.Random,
    speakers: tuple[str, str],
    placed: list[_Placed],
    scenarios: list[ErrorType | None],
    facts: list[Fact],
    follow_ups: list[int | None],
    n_sessions: int,
    evidence_fraction: float,
    start: datetime,
) -> Conversation:
    """Shuffle turns within sessions, add chit-chat, and find where each question's fact is."""
    by_session: list[list[_Placed]] = [[] for _ in range(n_sessions)]
    for item in placed:
        by_session[item.session].append(item)
    for items in by_session:
        for _ in range(max(2, len(items) // 3)):
            items.append(_Placed(0, Turn(rng.choice(speakers), rng.choice(FILLER))))
        rng.shuffle(items)
    where: dict[int, tuple[int, int]] = {}
    for s, items in enumerate(by_session):
        for t, item in enumerate(items):
            if item.question is not None:
                where[item.question] = (s, t)
    evidence = [i < round(evidence_fraction * len(scenarios)) for i in range(len(scenarios))]
    rng.shuffle(evidence)
    counters: dict[ErrorType | None, int] = {}
    questions = []
    for i, scenario in enumerate(scenarios):
        variant = counters.get(scenario, 0)
        counters[scenario] = variant + 1
        s, t = where[i]
        questions.append(
            Question(facts[i], scenario, variant % 2, s, t, follow_ups[i], evidence[i])
        )
    sessions = [[item.turn for item in items] for items in by_session]
    return Conversation(speakers, sessions, questions, start)
