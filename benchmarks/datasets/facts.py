"""Realistic synthetic facts (people, places, dates, numbers), each with a question and answers.

Every fact is keyed by (relation, person), and no two facts share a key, so each question has
exactly one right answer in a conversation, and a corrupted copy of a fact (its answer replaced by a
wrong value of the same type) can be told apart from the original by substring match.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass

FIRST_NAMES = (
    "Alice", "Bruno", "Chloe", "Daniel", "Elena", "Farid", "Grace", "Hugo", "Ines", "Jonas",
    "Keiko", "Liam", "Maya", "Nikolai", "Olivia", "Pedro", "Quinn", "Rosa", "Samir", "Tara",
    "Umar", "Vera", "Wei", "Ximena", "Yusuf", "Zoe", "Amara", "Bjorn", "Carmen", "Dmitri",
    "Esther", "Felix", "Gustavo", "Hana", "Ivan", "Julia", "Kofi", "Lena", "Marco", "Nadia",
)  # fmt: skip
LAST_NAMES = (
    "Moreau", "Okafor", "Lindqvist", "Tanaka", "Silva", "Novak", "Haddad", "Fischer", "Rossi",
    "Kowalski", "Mensah", "Duarte", "Ivanova", "Brennan", "Castillo", "Nguyen", "Petrov", "Sato",
    "Andersen", "Costa", "Dubois", "Eriksen", "Ferreira", "Gallo", "Horvath", "Jensen", "Kaur",
    "Larsen", "Morales", "Nakamura", "Ortiz", "Park", "Quintero", "Reyes", "Schmidt", "Torres",
    "Vargas", "Weber", "Yilmaz", "Zhang",
)  # fmt: skip
CITIES = (
    "Lisbon", "Porto", "Madrid", "Seville", "Lyon", "Marseille", "Berlin", "Hamburg", "Vienna",
    "Prague", "Krakow", "Budapest", "Oslo", "Bergen", "Helsinki", "Tallinn", "Dublin", "Galway",
    "Edinburgh", "Manchester", "Toronto", "Vancouver", "Montreal", "Boston", "Denver", "Austin",
    "Seattle", "Chicago", "Osaka", "Kyoto", "Seoul", "Busan", "Melbourne", "Perth", "Auckland",
    "Nairobi", "Accra", "Lagos", "Cape Town", "Bogota",
)  # fmt: skip
COUNTRIES = (
    "Portugal", "Spain", "France", "Italy", "Greece", "Croatia", "Norway", "Iceland", "Ireland",
    "Scotland", "Morocco", "Egypt", "Kenya", "Ghana", "Japan", "Vietnam", "Thailand", "Peru",
    "Chile", "Mexico", "Canada", "Brazil", "Argentina", "Turkey", "Georgia", "Nepal",
)  # fmt: skip
MONTHS = (
    "January", "February", "March", "April", "May", "June", "July", "August", "September",
    "October", "November", "December",
)  # fmt: skip
ANIMALS = ("cat", "dog", "parrot", "rabbit", "hamster", "tortoise")
PET_NAMES = (
    "Milo", "Luna", "Biscuit", "Pepper", "Nala", "Oscar", "Mochi", "Ziggy", "Clover", "Rocco",
    "Pickles", "Juniper", "Waffles", "Olive", "Sprout", "Tofu", "Bingo", "Hazel", "Noodle", "Kiwi",
)  # fmt: skip
COMPANIES = (
    "Globex", "Initech", "Umbrella Labs", "Hooli", "Stark Freight", "Wayne Biotech", "Soylent",
    "Vandelay Imports", "Cyberdyne", "Tyrell Optics", "Wonka Foods", "Acme Robotics", "Pied Piper",
    "Monarch Energy", "Oscorp", "Massive Dynamic", "Blue Sun", "Nakatomi Trading",
)  # fmt: skip
JOBS = (
    "nurse", "data analyst", "architect", "pastry chef", "teacher", "civil engineer", "paramedic",
    "translator", "product designer", "pharmacist", "accountant", "marine biologist",
)  # fmt: skip
INSTRUMENTS = ("violin", "cello", "piano", "saxophone", "drums", "ukulele", "trumpet", "harp")
CARS = ("Toyota Corolla", "Honda Civic", "Volvo XC40", "Kia Niro", "Ford Focus", "Mazda 3")
COLORS = ("red", "blue", "green", "silver", "black", "white", "yellow")
SPORTS = ("tennis", "badminton", "squash", "volleyball", "table tennis", "basketball", "chess")
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")

FILLER = (
    "How was your week?", "Ha, that's great to hear!", "Wow, I did not see that coming.",
    "I have been so busy with work lately.", "Sounds like a lot of fun.", "Tell me more!",
    "I need a holiday, honestly.", "That's lovely.", "Oh no, really?", "Let's catch up soon.",
    "The weather has been awful here.", "I'm so happy for them.", "Good for them!",
    "I keep meaning to call them.", "Time flies, doesn't it?", "Same here, to be honest.",
)  # fmt: skip
OPENERS = ("", "Guess what, ", "By the way, ", "Oh, I forgot to tell you: ", "Did you hear? ")


@dataclass(frozen=True)
class Fact:
    """One question-able fact. ``pattern`` holds ``{answer}`` where the answer value goes."""

    relation: str
    person: str
    pattern: str
    answer: str
    question: str
    wrong: tuple[str, str]

    @property
    def statement(self) -> str:
        return self.pattern.replace("{answer}", self.answer)

    @property
    def corrupted(self) -> str:
        """The same fact with its answer replaced by a plausible wrong value."""
        return self.pattern.replace("{answer}", self.wrong[0])


_Draw = Callable[[random.Random], str]
_Template = Callable[[random.Random, str], tuple[str, str, str, _Draw]]


def _pick(values: tuple[str, ...]) -> _Draw:
    return lambda rng: rng.choice(values)


def _year(rng: random.Random) -> int:
    return rng.randint(2012, 2023)


def _moved(rng: random.Random, p: str) -> tuple[str, str, str, _Draw]:
    when = f"{rng.choice(MONTHS)} {_year(rng)}"
    return (
        f"{p} moved to {{answer}} in {when}.",
        rng.choice(CITIES),
        f"Where did {p} move to in {when}?",
        _pick(CITIES),
    )


def _pet(rng: random.Random, p: str) -> tuple[str, str, str, _Draw]:
    animal = rng.choice(ANIMALS)
    return (
        f"{p} adopted a {animal} named {{answer}} in {_year(rng)}.",
        rng.choice(PET_NAMES),
        f"What is the name of the {animal} that {p} adopted?",
        _pick(PET_NAMES),
    )


def _job(rng: random.Random, p: str) -> tuple[str, str, str, _Draw]:
    when = f"{rng.choice(MONTHS)} {_year(rng)}"
    return (
        f"{p} started working at {{answer}} as a {rng.choice(JOBS)} in {when}.",
        rng.choice(COMPANIES),
        f"Which company did {p} start working at in {when}?",
        _pick(COMPANIES),
    )


def _marathon(rng: random.Random, p: str) -> tuple[str, str, str, _Draw]:
    city = rng.choice(CITIES)

    def minutes(r: random.Random) -> str:
        return f"{r.randint(150, 330)} minutes"

    return (
        f"{p} finished the {city} marathon in {{answer}}.",
        minutes(rng),
        f"How long did it take {p} to finish the {city} marathon?",
        minutes,
    )


def _car(rng: random.Random, p: str) -> tuple[str, str, str, _Draw]:
    car = f"{rng.choice(COLORS)} {rng.choice(CARS)}"

    def price(r: random.Random) -> str:
        return f"{r.randint(40, 390) * 100} dollars"

    return (
        f"{p} bought a {car} for {{answer}}.",
        price(rng),
        f"How much did {p} pay for the {car}?",
        price,
    )


def _daughter(rng: random.Random, p: str) -> tuple[str, str, str, _Draw]:
    child = rng.choice(FIRST_NAMES)

    def date(r: random.Random) -> str:
        return f"{r.randint(1, 28)} {r.choice(MONTHS)} {_year(r)}"

    return (
        f"{p}'s daughter {child} was born on {{answer}}.",
        date(rng),
        f"When was {p}'s daughter {child} born?",
        date,
    )


def _instrument(rng: random.Random, p: str) -> tuple[str, str, str, _Draw]:
    instrument = rng.choice(INSTRUMENTS)

    def when(r: random.Random) -> str:
        return f"{r.choice(MONTHS)} {_year(r)}"

    return (
        f"{p} started learning the {instrument} in {{answer}}.",
        when(rng),
        f"When did {p} start learning the {instrument}?",
        when,
    )


def _trip(rng: random.Random, p: str) -> tuple[str, str, str, _Draw]:
    friend = rng.choice(FIRST_NAMES)
    when = f"{rng.choice(MONTHS)} {_year(rng)}"
    return (
        f"{p} visited {{answer}} with {friend} in {when}.",
        rng.choice(COUNTRIES),
        f"Which country did {p} visit with {friend} in {when}?",
        _pick(COUNTRIES),
    )


TEMPLATES: dict[str, _Template] = {
    "moved": _moved,
    "pet": _pet,
    "job": _job,
    "marathon": _marathon,
    "car": _car,
    "daughter": _daughter,
    "instrument": _instrument,
    "trip": _trip,
}


def _distinct_wrong(rng: random.Random, answer: str, draw: _Draw) -> tuple[str, str]:
    """Two wrong values that neither contain nor are contained in the answer or each other."""
    found: list[str] = []
    while len(found) < 2:
        value = draw(rng)
        if all(value not in other and other not in value for other in [answer, *found]):
            found.append(value)
    return found[0], found[1]


def people(rng: random.Random) -> list[str]:
    """Every full name, shuffled: 1,600 distinct people."""
    names = [f"{first} {last}" for first in FIRST_NAMES for last in LAST_NAMES]
    rng.shuffle(names)
    return names


def fact_stream(rng: random.Random, persons: list[str]) -> Iterator[Fact]:
    """Facts with unique (relation, person) keys, as long as there are unused keys."""
    keys = [(relation, person) for person in persons for relation in TEMPLATES]
    rng.shuffle(keys)
    for relation, person in keys:
        pattern, answer, question, draw = TEMPLATES[relation](rng, person)
        yield Fact(relation, person, pattern, answer, question, _distinct_wrong(rng, answer, draw))


def hobby(rng: random.Random, person: str) -> tuple[str, str]:
    """A side fact about ``person`` and the sentence that later retracts it."""
    sport = rng.choice(SPORTS)
    return (
        f"{person} plays {sport} every {rng.choice(WEEKDAYS)}.",
        f"{person} stopped playing {sport}.",
    )
