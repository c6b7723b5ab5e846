"""Dates a text states, absolute or relative to when it was said, as plain words.

"I went yesterday", said on 8 May 2023, states 7 May 2023; "last week" states the week before
8 May 2023 (LoCoMo's own answer form: "The week before 8 May 2023"). :func:`resolved_words`
returns the words of every date a text states relative to ``when`` (the unit's timestamp or the
session date its trace records), so a judge can compare them with an expected answer's words.
Only simple, unambiguous expressions are resolved; anything else is left alone.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from service.text import NUMBER_WORDS

MONTHS = [
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
]
WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
_AGO = re.compile(r"\b(\w+) (day|week|month|year)s? ago\b")
_LAST = re.compile(
    r"\b(last|past|previous|next|this) (week|weekend|month|year|" + "|".join(WEEKDAYS) + r")\b"
)
_SIMPLE = {"yesterday": -1, "today": 0, "tonight": 0, "tomorrow": 1}


def _day(when: datetime) -> list[str]:
    return [str(when.day), MONTHS[when.month - 1], str(when.year)]


def _month(year: int, month: int) -> list[str]:
    year += (month - 1) // 12
    return [MONTHS[(month - 1) % 12], str(year)]


def resolved_words(text: str, when: datetime | None) -> list[str]:
    """Words of the dates ``text`` states relative to ``when`` (empty without a time)."""
    if when is None:
        return []
    lower = text.lower()
    out: list[str] = []
    for word, shift in _SIMPLE.items():
        if re.search(rf"\b{word}\b", lower):
            out += _day(when + timedelta(days=shift))
    for count, unit in _AGO.findall(lower):
        n = int(count) if count.isdigit() else int(NUMBER_WORDS.get(count, "0") or 0)
        if not n:
            continue
        if unit in ("day", "week"):
            out += _day(when - timedelta(days=n * (7 if unit == "week" else 1)))
        elif unit == "month":
            out += _month(when.year, when.month - n)
        else:
            out.append(str(when.year - n))
    for which, unit in _LAST.findall(lower):
        step = {"last": -1, "past": -1, "previous": -1, "next": 1, "this": 0}[which]
        if unit in ("week", "weekend"):
            # LoCoMo and people alike say "the week before <date>"
            out += [unit, "before" if step < 0 else "after", *_day(when)]
            out += _day(when + timedelta(days=7 * step))
        elif unit == "month":
            out += _month(when.year, when.month + step)
        elif unit == "year":
            out.append(str(when.year + step))
        else:  # a weekday: the nearest one before (last) or after (next) the day it was said
            target = WEEKDAYS.index(unit)
            delta = (when.weekday() - target) % 7 or 7
            day = (
                when - timedelta(days=delta)
                if step <= 0
                else when + timedelta(days=(target - when.weekday()) % 7 or 7)
            )
            out += [unit, "before" if step <= 0 else "after", *_day(when), *_day(day)]
    return out
