"""The probe set ``memtrace judge check`` runs a model on: questions and units whose answer is
known by construction. Pure; no I/O.

Each question comes with units written to carry its answer or not:

- ``plain``: the fact stated plainly (carries);
- ``paraphrase``: the fact in other words (carries);
- ``topic``: about the subject and topic, without the fact (does not);
- ``wrong``: a statement supporting the wrong answer (does not);
- ``long-with`` / ``long-without``: 1,500-4,000 characters of a retrieved context, memories
  about other people, with the plain fact somewhere inside (carries), or with a topic line and a
  line using the answer's word about something else (does not);
- for dates, ``date-absolute`` (carries), ``date-relative`` ("yesterday", recorded the day after:
  carries), ``date-relative-elsewhere`` (the same words recorded on another day: does not) and
  ``date-wrong`` (the wrong date stated: does not).

Invariants:

- deterministic: the same units, ids and order on every call and machine (no clock, no data
  from outside; the order comes from ``random.Random`` seeded with a string, which Python
  hashes with SHA-512, not with the per-process hash seed);
- a label is true by how the unit was written, never by asking a judge;
- ids and kinds say nothing about labels (``p03-u2``: question 3, place 2), and carriers sit at
  different places in different questions, so neither a model reading ids nor one favouring a
  position scores by it;
- filler lines share no word with any question's answer or wrong answer (a test checks).

:data:`PROBE_SET` names the set; change it with any change to the units, so a recorded check
says which set it measured.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

from service.attribution.judges.base import Question, UnitText
from service.attribution.judges.dates import MONTHS

PROBE_SET = "judge-probes@1"

NAMES = ("Ann", "Ben", "Carla", "Dev", "Ella", "Farid", "Gina", "Hugo", "Iris")
"""The subject of each question, in order: facts first, then dates."""

FILLER_NAMES = ("Marta", "Jonas", "Kofi", "Yuki", "Sven", "Rosa", "Pavel", "Amara")
"""People the long units' filler is about (never a question's subject)."""

FILLER_LINES = (
    "{a} takes the bus to work, and it was late again this week.",
    "{a} is trying a new recipe for lentil soup with smoked paprika.",
    "{a} and {b} argued about which film to watch on Friday night.",
    "{a} repainted the kitchen a pale green over the weekend.",
    "{a} forgot an umbrella and got soaked on the way home.",
    "{a} is reading a long novel about sailors and keeps losing the bookmark.",
    "{a} wants to visit the botanical garden when the roses are out.",
    "{a} asked {b} for advice about fixing a squeaky bicycle chain.",
    "{a} signed up for a pottery class at the community centre.",
    "{a} thinks the new bakery on the corner sells the best rye bread.",
    "{a} spent Sunday afternoon sorting old photographs into albums.",
    "{a} and {b} went hiking and got lost near the reservoir.",
    "{a} is learning to knit and has finished half of a scarf.",
    "{a} complained that the neighbours play loud music late at night.",
    "{a} prefers green tea in the morning and coffee after lunch.",
    "{a} lent {b} a ladder and has not seen it since.",
)
"""Memories about other people, as a retrieved context lists them: plausible, and about nothing
a question asks."""


@dataclass(frozen=True)
class ProbeUnit:
    """A unit and whether it carries its question's answer (by construction); ``role`` says how
    it was written (see the module docstring)."""

    unit: UnitText
    carries: bool
    role: str


@dataclass(frozen=True)
class Probe:
    """One question and the units a judge is asked about for it."""

    question: Question
    units: tuple[ProbeUnit, ...]


@dataclass(frozen=True)
class _Fact:
    """Templates of one fact question; ``{name}`` is its subject. ``decoy`` uses the answer's
    word about something else; ``paraphrase`` states the fact in other words."""

    question: str
    answer: str
    wrong: str
    plain: str
    paraphrase: str
    topic: str
    wrong_unit: str
    decoy: str


FACTS = (
    _Fact(
        "Which city does {name} live in now?",
        "Lisbon",
        "Madrid",
        "{name} lives in Lisbon now.",
        "{name}'s home these days is the Portuguese capital; the move was finished in spring.",
        "{name} has been comparing neighbourhoods and rents ever since moving came up.",
        "{name} lives in Madrid and walks to work every morning.",
        "Marco spent a long weekend in Lisbon some years ago.",
    ),
    _Fact(
        "What does {name} do for a living?",
        "nurse",
        "teacher",
        "{name} works as a nurse.",
        "{name} is on the nursing staff of the children's hospital and works night shifts.",
        "{name} says the job is tiring and there are never enough holidays.",
        "{name} works as a teacher at the local school.",
        "Priya's aunt trained as a nurse decades ago.",
    ),
    _Fact(
        "What is the name of {name}'s dog?",
        "Biscuit",
        "Pepper",
        "{name}'s dog is called Biscuit.",
        "Every morning {name} walks Biscuit, the family beagle, along the river.",
        "{name} wants to take the dog to obedience classes after the summer.",
        "{name}'s dog is called Pepper.",
        "The café near Tom's office sells a lemon biscuit everyone likes.",
    ),
    _Fact(
        "Which food is {name} allergic to?",
        "peanuts",
        "shellfish",
        "{name} is allergic to peanuts.",
        "{name} carries an adrenaline pen because even a single peanut could mean hospital.",
        "{name} always reads food labels carefully before buying snacks.",
        "{name} is allergic to shellfish and never orders prawns.",
        "Lena made a peanut sauce for the noodles at the party.",
    ),
    _Fact(
        "What is {name}'s favourite season?",
        "autumn",
        "summer",
        "{name}'s favourite season is autumn.",
        "{name} is happiest when the leaves turn orange and drop, more than at any other time.",
        "{name} talked about the weather and which coat to wear this year.",
        "{name}'s favourite season is summer.",
        "Omar's birthday falls in autumn.",
    ),
    _Fact(
        "How many sisters does {name} have?",
        "two",
        "one",
        "{name} has two sisters.",
        "{name} grew up with sisters Nora and Leila, and there are no other siblings.",
        "{name} says the family is very close and meets for lunch on Sundays.",
        "{name} has one sister, Nora.",
        "Grace keeps two cats and a rabbit.",
    ),
)


@dataclass(frozen=True)
class _DateFact:
    """Templates of one date question. ``relative`` is said ``said_after`` days after the
    event (so it states the event's day); the same words said ``elsewhere_after`` days after
    it state another day, which is the wrong answer."""

    question: str
    event: date
    relative: str
    said_after: int
    elsewhere_after: int
    absolute: str  # with {day}
    topic: str


DATE_FACTS = (
    _DateFact(
        "When did {name} adopt a cat?",
        date(2023, 5, 7),
        "{name}: We adopted a cat yesterday, a tiny grey one!",
        1,
        45,
        "{name} adopted a cat on {day}.",
        "{name}: I am looking at scratching posts and cat food.",
    ),
    _DateFact(
        "When did {name} run a first marathon?",
        date(2023, 4, 16),
        "{name}: I ran my first marathon three days ago and my legs still hurt.",
        3,
        169,
        "{name} ran a first marathon on {day}.",
        "{name}: I have been training for a marathon with a running club.",
    ),
    _DateFact(
        "When did {name} start the new job?",
        date(2023, 7, 3),
        "{name}: Today was my first day at the new job!",
        0,
        70,
        "{name} started the new job on {day}.",
        "{name}: The interviews for the new job went well, I think.",
    ),
)


_Row = tuple[str, str, str, bool, datetime | None]
"""(role, kind, content, carries, recorded) of one probe unit before it is placed."""


def day_words(day: date) -> str:
    """A day as the answers say it: ``7 May 2023``."""
    return f"{day.day} {MONTHS[day.month - 1].capitalize()} {day.year}"


def _filler(seed: int, length: int, inserted: list[str]) -> str:
    """A context of filler memories about ``length`` characters long, with ``inserted`` lines
    spread over its second half (never first: an excerpt must find them)."""
    lines: list[str] = []
    k = 0
    budget = length - sum(len(line) + 3 for line in inserted)
    while sum(len(line) + 3 for line in lines) < budget:
        a = FILLER_NAMES[(seed + k) % len(FILLER_NAMES)]
        b = FILLER_NAMES[(seed + k + 3) % len(FILLER_NAMES)]
        lines.append(FILLER_LINES[(seed * 5 + k * 7) % len(FILLER_LINES)].format(a=a, b=b))
        k += 1
    for i, line in enumerate(inserted):
        at = len(lines) * (i + 2) // (len(inserted) + 2)
        lines.insert(max(at, len(lines) // 2), line)
    return "\n".join(f"- {line}" for line in lines)


def _long_lengths(q: int) -> tuple[int, int]:
    """Lengths of question ``q``'s two long units: different per question, 1,500-4,000."""
    step = (q * 600) % 2400
    return 1500 + step, 3900 - step


def _fact_units(q: int, fact: _Fact, name: str) -> list[tuple[str, str, str, bool]]:
    """(role, kind, content, carries) of a fact question's units."""

    def f(text: str) -> str:
        return text.format(name=name)

    with_len, without_len = _long_lengths(q)
    return [
        ("plain", "memory", f(fact.plain), True),
        ("paraphrase", "message", f(fact.paraphrase), True),
        ("topic", "message", f(fact.topic), False),
        ("wrong", "memory", f(fact.wrong_unit), False),
        ("long-with", "context", _filler(q, with_len, [f(fact.plain)]), True),
        (
            "long-without",
            "context",
            _filler(q + 1, without_len, [f(fact.topic), fact.decoy]),
            False,
        ),
    ]


def _at_evening(day: date) -> datetime:
    return datetime(day.year, day.month, day.day, 18, 30, tzinfo=UTC)


def _date_units(fact: _DateFact, name: str) -> tuple[list[_Row], str]:
    """(role, kind, content, carries, recorded) of a date question's units, and its wrong
    answer."""
    said = fact.event + timedelta(days=fact.said_after)
    elsewhere = fact.event + timedelta(days=fact.elsewhere_after)
    wrong_day = elsewhere - timedelta(days=fact.said_after)
    relative = fact.relative.format(name=name)
    units: list[_Row] = [
        (
            "date-absolute",
            "memory",
            fact.absolute.format(name=name, day=day_words(fact.event)),
            True,
            None,
        ),
        ("date-relative", "message", relative, True, _at_evening(said)),
        ("date-relative-elsewhere", "message", relative, False, _at_evening(elsewhere)),
        (
            "date-wrong",
            "memory",
            fact.absolute.format(name=name, day=day_words(wrong_day)),
            False,
            None,
        ),
        ("topic", "message", fact.topic.format(name=name), False, _at_evening(said)),
    ]
    return units, day_words(wrong_day)


def _probe(q: int, question: Question, rows: list[_Row]) -> Probe:
    order = list(range(len(rows)))
    random.Random(f"{PROBE_SET}/{q}").shuffle(order)
    units = []
    for place, i in enumerate(order):
        role, kind, content, carries, ts = rows[i]
        unit = UnitText(f"p{q:02d}-u{place}", kind, content, ts)
        units.append(ProbeUnit(unit, carries, role))
    return Probe(question, tuple(units))


def probe_set() -> list[Probe]:
    """The probe set :data:`PROBE_SET`: 6 fact questions of 6 units and 3 date questions of
    5 units (51 units, 24 carriers)."""
    probes: list[Probe] = []
    for q, fact in enumerate(FACTS):
        name = NAMES[q]
        question = Question(
            case_id=f"probe-{q:02d}",
            question=fact.question.format(name=name),
            expected_answer=fact.answer,
            wrong_answer=fact.wrong,
        )
        rows: list[_Row] = [(*row, None) for row in _fact_units(q, fact, name)]
        probes.append(_probe(q, question, rows))
    for offset, date_fact in enumerate(DATE_FACTS):
        q = len(FACTS) + offset
        name = NAMES[q]
        date_rows, wrong = _date_units(date_fact, name)
        question = Question(
            case_id=f"probe-{q:02d}",
            question=date_fact.question.format(name=name),
            expected_answer=day_words(date_fact.event),
            wrong_answer=wrong,
        )
        probes.append(_probe(q, question, date_rows))
    return probes
