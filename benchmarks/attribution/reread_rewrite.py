"""A careful reading of the store-rewriting set's labels (``rewrite``, issue 35's headline set).

The set labels a case by replaying its construction over what carries the case
(:func:`benchmarks.datasets.rewrite.carries`): a unit holding verbatim an observation that cites the
evidence turn, or stating the answer phrase. An observation may cite the turn for another of its
facts ("John is part of a basketball team ..." for "When did John meet his teammates?"), and a
short answer phrase may sit in an unrelated memory ("3 years" in "Joanna watched a movie around 3
years ago" for Nate's turtles). This module shows a reader what a case needs, and nothing of its
label or of MemTrace's result:

- the question, the expected answer, the evidence turn and the day it was said;
- every fact the evidence session's extraction wrote, each with what the store did with it up to
  question time (its decision, and the memory it became as the search found it, or its deletion);
- the live memories at question time that best match question and answer and are not among those
  (:data:`OTHER_LIVE`, by Okapi BM25 over the whole store the search read), and those holding the
  answer phrase;
- the context the answer model was given.

The reader answers, per case, whether the context, a live memory, and a fact as first extracted
state what the question needs (``yes``, ``no``, ``event-only``: a "when" question whose text names
the event but not its date), and, for a fact stated but no longer live, whether an ``update`` or a
``delete`` took it out. :func:`read_type` turns that into the error type the reading gives;
``benchmarks.attribution.reread`` compares it with the label and with the heuristic's result.

What the reader does not see: a fact of another session stating the answer, and the live memories
past the best matches. Either would move a reading from ExtractionError or UpdateError towards
RetrievalError.
"""

from __future__ import annotations

import random
from typing import Any, NamedTuple

from benchmarks.attribution.flatlog import batch_units
from benchmarks.datasets.bm25 import BM25
from benchmarks.datasets.locomo import holds

OTHER_LIVE = 6
"""Live memories shown beside the session's own facts: the best matches of question + answer."""


def ids(refs: list[Any]) -> list[str]:
    """An operation's inputs or outputs as unit ids (a batch may list them as objects)."""
    return [r["id"] if isinstance(r, dict) else r for r in refs]


def turn_messages(units: dict[str, dict[str, Any]]) -> dict[str, str]:
    """The message unit of each LoCoMo turn (its ``dia_id``), by turn."""
    turns = {}
    for uid, u in units.items():
        dia_id = (u.get("attributes") or {}).get("dia_id")
        if u.get("kind") == "message" and dia_id:
            turns[str(dia_id)] = uid
    return turns


def case_head(project: str, case: dict[str, Any], turn: dict[str, Any]) -> dict[str, Any]:
    """What every reading shows first: the case's key, question and answer, the evidence turn."""
    return {
        "key": f"{project}/{case['id']}",
        "question": case["question"],
        "expected_answer": case["expected_answer"],
        "evidence_turn": turn["content"],
        "evidence_said_at": turn.get("ts"),
    }


class Fate(NamedTuple):
    """What the store did with one extracted fact up to question time, as the reader sees it
    (``text``), and the version the question's search found live, if any."""

    text: str
    live: str | None = None


NO_DECISION = Fate("no decision")


class _History:
    """A batch's store decisions, indexed once: the decision each fact got and every version
    (and tombstone) of each memory, oldest first."""

    def __init__(self, units: dict[str, dict[str, Any]], ops: list[dict[str, Any]]) -> None:
        self.units = units
        self.decided = {ids(op["inputs"])[0]: op for op in ops if op["kind"] == "update"}
        self.versions: dict[str, list[str]] = {}  # memory_id -> unit ids, oldest first
        for uid, unit in sorted(units.items(), key=lambda u: u[1].get("ts") or ""):
            memory_id = (unit.get("attributes") or {}).get("memory_id")
            if memory_id:
                self.versions.setdefault(memory_id, []).append(uid)

    def fates(self, live: set[str], until: str) -> dict[str, Fate]:
        """Per extracted fact, what the store did with it before ``until``: its decision and
        the memory it became as the question's search found it (``live``), or its deletion."""
        units = self.units
        out = {}
        for fact, op in self.decided.items():
            event = (op.get("attributes") or {}).get("event", "?")
            made = [u for u in ids(op["outputs"]) if units[u]["kind"] == "memory"]
            if not made:
                out[fact] = Fate(f"{event}: stored nothing")
                continue
            memory_id = str((units[made[-1]].get("attributes") or {}).get("memory_id"))
            chain = [
                v for v in self.versions.get(memory_id, []) if (units[v].get("ts") or "") <= until
            ]
            last = chain[-1] if chain else made[-1]
            content = units[last]["content"]
            if units[last]["kind"] == "tombstone":
                out[fact] = Fate(f"{event}; later deleted (not live at question time)")
            elif last in live and content == units[fact]["content"]:
                out[fact] = Fate(f"{event}; live at question time, unchanged", content)
            elif last in live:
                out[fact] = Fate(f"{event}; live at question time as: {content}", content)
            else:
                out[fact] = Fate(f"{event}; not live at question time")
        return out


def sample(batches: list[Any], size: int, seed: int) -> list[dict[str, Any]]:
    """``size`` failed cases of the set's ``batches``, drawn at random (``seed``), as a reader
    gets them: what the case needs, no label, no result."""
    out = []
    for item in batches:
        units, ops = batch_units(item.batch), item.batch["operations"]
        message_of = turn_messages(units)
        history = _History(units, ops)
        answered_by = {a: op for op in ops if op["kind"] == "response" for a in ids(op["outputs"])}
        search_of = {c: op for op in ops if op["kind"] == "retrieval" for c in ids(op["outputs"])}
        for case in item.batch["cases"]:
            if case["id"] not in item.labels:
                continue
            answer_op = answered_by[case["answer_unit"]]
            contexts = [u for u in ids(answer_op["inputs"]) if units[u]["kind"] == "context"]
            search = search_of[contexts[0]]
            live = {u for u in ids(search["inputs"]) if units[u]["kind"] == "memory"}
            turn = message_of[item.hidden["evidence"][case["id"]]]
            extraction = next(
                op for op in ops if op["kind"] == "extraction" and turn in ids(op["inputs"])
            )
            facts = [u for u in ids(extraction["outputs"]) if units[u]["kind"] == "memory"]
            fates = history.fates(live, search["ts"])
            query = f"{case['question']} {case['expected_answer']}"
            phrase = item.hidden["phrases"].get(case["id"], "")
            shown = {units[f]["content"] for f in facts}
            shown |= {fate.live for f in facts if (fate := fates.get(f)) and fate.live}
            pool = [units[u]["content"] for u in sorted(live)]
            others = [pool[i] for i in BM25(pool).rank(query) if pool[i] not in shown]
            others = others[:OTHER_LIVE] + [t for t in others[OTHER_LIVE:] if holds(t, phrase)]
            out.append(
                {
                    **case_head(item.batch["project"], case, units[turn]),
                    "facts_extracted_from_that_session": [
                        {"fact": units[f]["content"], "then": fates.get(f, NO_DECISION).text}
                        for f in facts
                    ],
                    "other_live_memories_best_matching": others,
                    "context_given_to_the_answer_model": [units[u]["content"] for u in contexts],
                }
            )
    random.Random(seed).shuffle(out)
    return out[:size]


def read_type(answer: dict[str, str], lenient: bool) -> str:
    """The error type a reading gives: where the information was last stated. Strictly, a
    "when" question's event named without its date is not stated; leniently it is."""
    states = {"yes", "event-only"} if lenient else {"yes"}
    if answer["context"] in states:
        return "ResponseError"
    if answer["live"] in states:
        return "RetrievalError"
    if answer["extracted"] in states:
        return "DeletionError" if answer.get("lost_by") == "delete" else "UpdateError"
    return "ExtractionError"
