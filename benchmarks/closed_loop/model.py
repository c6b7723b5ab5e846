"""The deterministic simulated memory model of ``benchmarks.closed_loop``, served over the
OpenAI-compatible HTTP API (``answer(request) -> str`` for ``tests.support.llm_server``).

It stands in for an LLM so that the closed loop runs end to end without one. Its behaviour
depends on the prompt it is given, by these rules and no others. A prompt's rules are read from
its template (the system message) with the placeholders removed and lower-cased, so a slot named
``{session_date}`` asks for nothing.

Extraction (system message starts with the extraction template; user message: JSON ``{turn,
speaker, session_date}``) answers ``{"facts": ["<speaker>: <turn>"]}``, and:

- without the word "date" in the prompt it drops every date expression (month and weekday names,
  years, "yesterday", "last week", "3 days ago", ...); with it, it keeps them and adds the dates
  that relative ones state, resolved against the session date ("yesterday" said on 8 May 2023
  adds "7 May 2023", by ``service.attribution.judges.dates``);
- without the word "number" it drops numbers (digits and number words) that are not part of a
  date it keeps; with it, keeps them.

Answering (user message: JSON ``{question, memories}``) answers with the best memory given,
verbatim (an extractive reader); with the words "all the memories" in the prompt, with the three
best, joined.

Optimisation (the calls of ``service.prompts.optimize``, told apart by their system
message): feedback names one rule from the failure: for a ResponseError, to use all the
memories; otherwise, for a date in the expected answer or a "when" question, the date rule; for
a number or a "how many / how long / how old" question, the number rule; else a rule that
changes nothing. Aggregation lists the distinct rules, most frequent first; the edit appends the
rules the template lacks under "Rules:". It never drops a placeholder: the service's refusal is
tested elsewhere.

What this cannot show: whether a real model follows an edited prompt, or whether real feedback
finds the right rule. It shows the loop's mechanics for real: traces, attribution, feedback on
the blamed prompt, a stored new version, and the next round running with it.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from datetime import datetime
from typing import Any

from memtrace_client.prompts import PLACEHOLDER_RE

from service.attribution.judges.dates import MONTHS, WEEKDAYS, resolved_words
from service.text import NUMBER_WORDS

EXTRACTION_MARK = "You extract facts"
ANSWER_MARK = "You answer a question"

DATE_RULE = (
    "Keep every date and time expression, and resolve relative dates against the date the "
    "turn was said."
)
NUMBER_RULE = "Keep every number and quantity exactly as said."
ANSWER_ALL_RULE = "Use all the memories retrieved, not only the first one."
NEUTRAL_RULE = "Keep the exact words people use for names, places and things."

_DATE = re.compile(
    r"\b(?:(?:\d{1,2} )?(?:"
    + "|".join(MONTHS)
    + r")(?: \d{1,2})?(?:,? (?:19|20)\d\d)?"
    + r"|(?:last|past|previous|next|this) (?:week|weekend|month|year|"
    + "|".join(WEEKDAYS)
    + r")|\w+ (?:day|week|month|year)s? ago|yesterday|today|tonight|tomorrow|"
    + "|".join(MONTHS + WEEKDAYS)
    + r"|(?:19|20)\d\d)\b",
    re.IGNORECASE,
)
_NUMBER = re.compile(
    r"\b(?:\d+(?:[.,]\d+)?|" + "|".join(w for w in NUMBER_WORDS if len(w) > 2) + r")\b",
    re.IGNORECASE,
)
_SPACES = re.compile(r"\s{2,}")


def rules_of(template: str) -> str:
    """The words a template asks with: placeholders removed, lower-cased."""
    return PLACEHOLDER_RE.sub(" ", template).lower()


def extract(template: str, speaker: str, turn: str, said_on: datetime) -> list[str]:
    asks = rules_of(template)
    keeps_dates = "date" in asks
    # Split into date expressions and the rest: numbers are dropped from the rest only.
    parts = re.split(f"({_DATE.pattern})", turn, flags=re.IGNORECASE)
    kept = []
    for i, part in enumerate(parts):
        if i % 2:  # a date expression
            kept.append(part if keeps_dates else "")
        else:
            kept.append(part if "number" in asks else _NUMBER.sub("", part))
    text = "".join(kept)
    if keeps_dates:
        stated = " ".join(resolved_words(turn, said_on))
        if stated:
            text = f"{text} (that is: {stated})"
    return [_SPACES.sub(" ", f"{speaker}: {text}").strip()]


def answer(template: str, question: str, memories: list[str]) -> str:
    best = memories[:3] if "all the memories" in rules_of(template) else memories[:1]
    return " ".join(best) or "I do not know."


def _field(text: str, label: str) -> str:
    m = re.search(rf"^{label}: (.*)$", text, re.MULTILINE)
    if not m:
        return ""
    try:
        return str(json.loads(m.group(1)))
    except ValueError:
        return m.group(1)


def feedback(user: str) -> str:
    error = _field(user, "Error type").split(" ", 1)[0]
    expected = _field(user, "Expected answer").lower()
    question = _field(user, "Question").lower()
    if error == "ResponseError":
        return ANSWER_ALL_RULE
    if _DATE.search(expected) or "before" in expected or question.startswith("when"):
        return DATE_RULE
    if _NUMBER.search(expected) or question.startswith(("how many", "how long", "how old")):
        return NUMBER_RULE
    return NEUTRAL_RULE


def aggregate(user: str) -> str:
    found = re.findall(r"^- \(\w*\) (\".*\")$", user, re.MULTILINE)
    counts = Counter(json.loads(f) for f in found)
    return "\n".join(f"- {rule}" for rule, _ in counts.most_common())


def edit(user: str) -> str:
    head, template = user.split("\nCurrent template:\n", 1)
    rules = [line[2:] for line in head.splitlines() if line.startswith("- ")]
    new = [r for r in dict.fromkeys(rules) if r not in template]
    if not new:
        return template
    joiner = "\n" if "\nRules:" in template else "\nRules:\n"
    return template + joiner + "\n".join(new)


def respond(request: dict[str, Any]) -> str:
    """What the simulated model says to one chat completion request."""
    messages = request.get("messages", [])
    system = str(messages[0].get("content", "")) if messages else ""
    user = "\n".join(str(m.get("content") or "") for m in messages if m.get("role") == "user")
    if system.startswith(EXTRACTION_MARK):
        slots = json.loads(user)
        said_on = datetime.fromisoformat(slots["session_date"])
        return json.dumps({"facts": extract(system, slots["speaker"], slots["turn"], said_on)})
    if system.startswith(ANSWER_MARK):
        slots = json.loads(user)
        return answer(system, slots["question"], slots["memories"])
    if system.startswith("You improve a prompt template"):
        return feedback(user)
    if system.startswith("You combine feedback"):
        return aggregate(user)
    if system.startswith("You edit a prompt"):
        return edit(user)
    return "I do not know."
