"""Mem0 (classic) over real LoCoMo observations: a store that rewrites itself, decided by rule.

Mem0 1.x ``add()`` extracts facts, then, per fact, shows an LLM the most similar existing memories
of the user and applies its ADD / UPDATE / DELETE / NONE. Here the facts are LoCoMo's own
observations (real extraction output) and the LLM's decision is a deterministic rule, so every
rewrite of the store is known and a label can be read off what construction did:

- the fact's best match is a live memory of the same speaker (word overlap, see :func:`similarity`);
- near-duplicate (its content words inside the match's, or overlap >= ``DUPLICATE``): NONE;
- related (overlap >= ``RELATED``, or a shared name and overlap >= ``RELATED_NAMED``) and the fact
  reads as a retraction (:data:`RETRACTION`): DELETE the match (a tombstone) and ADD the fact;
- related otherwise: UPDATE the match, a new version under its ``memory_id``: ``merged`` (old then
  new), ``overwritten`` (the new fact only) or ``dropped`` (the old one's first sentence, or its
  last clause, dropped; then the new fact), chosen by a hash of the conversation, the memory's
  creation number and its version (not its id: the labels are the same in every shape);
- otherwise ADD.

The thresholds were set from the data's decision counts alone, before any attribution ran on it.
A caller may also force a related UPDATE into a DELETE (a wrong deletion, :meth:`UserStore.decide`
``wrong_delete``): what the rule did, wrong or not, is in the trace and in :attr:`UserStore.steps`.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from ..builder import BatchBuilder

SYSTEM = "mem0-rewrite"
EXTRACT = "memory_system.extract_facts"
DECIDE = "memory_system.update_memory_decision"
SEARCH = "memory_system.search_vector_store"
ANSWER = "question-answering"
SIMILAR = 5  # old memories shown to each decision, as Mem0 searches 5
DUPLICATE = 0.6
RELATED = 0.2
RELATED_NAMED = 0.1
MERGED, OVERWRITTEN, DROPPED = "merged", "overwritten", "dropped"
RETRACTION = re.compile(
    r"\b(no longer|not anymore|anymore|stopped|quit|gave up|broke up|cancell?ed|sold|ended)\b",
    re.IGNORECASE,
)
_STOP = frozenset(
    re.findall(
        r"[a-z]+",
        """the and for with that this from have has had was were are her his she him they them their
    its about into over also been being just very some more most when what which who will would
    can could should after before while during other than then there these those such because
    really recently currently last next year years month months week weeks day days time""",
    )
)
_NAME = re.compile(r"(?<![.!?]\s)(?<!^)\b([A-Z][a-z]{2,})\b")
_CLAUSE = re.compile(r",\s|\s(?:and|with|to|for|at|in|because|which|who)\s")


def words(text: str, ignore: frozenset[str] = frozenset()) -> frozenset[str]:
    """Content words: lower-cased, three letters or more, no stop words, none of ``ignore``."""
    return frozenset(
        w for w in re.findall(r"[a-z0-9]+", text.lower()) if len(w) >= 3 and w not in _STOP | ignore
    )


def names(text: str, ignore: frozenset[str]) -> frozenset[str]:
    """Capitalised words inside a sentence (a crude named entity), the speakers' names left out."""
    return frozenset(n.lower() for n in _NAME.findall(text)) - ignore - _STOP


def similarity(a: str, b: str, ignore: frozenset[str]) -> float:
    """Jaccard overlap of content words; the speakers' names say nothing about the subject."""
    wa, wb = words(a, ignore), words(b, ignore)
    return len(wa & wb) / len(wa | wb) if wa and wb else 0.0


def dropped_detail(old: str) -> str:
    """``old`` with one detail gone: its first sentence if it has several (the oldest merged
    fact), else its last clause; "" when there is nothing to cut (the update overwrites)."""
    sentences = [s for s in re.split(r"(?<=[.!?])\s+", old.strip()) if s]
    if len(sentences) > 1:
        return " ".join(sentences[1:])
    cuts = [m.start() for m in _CLAUSE.finditer(old) if len(old[: m.start()].split()) >= 3]
    return old[: cuts[-1]].rstrip(" ,") + "." if cuts else ""


def _draw(*parts: object) -> float:
    text = "|".join(str(p) for p in parts)
    return int(hashlib.sha256(text.encode("utf-8")).hexdigest()[:8], 16) / 2**32


@dataclass
class Memory:
    memory_id: str
    number: int  # creation order in its store: what the variant's draw reads, unlike the id
    speaker: str
    unit: str
    text: str
    version: int = 1


@dataclass(frozen=True)
class Step:
    """One construction operation: the units it put into, and took out of, what the system holds
    (pending facts and live memory versions)."""

    op: str
    event: str  # EXTRACT, ADD, UPDATE:<variant>, DELETE, NONE
    born: tuple[str, ...]
    died: tuple[str, ...]


@dataclass
class UserStore:
    """One user's Mem0 store: the live memories, and every construction step in order."""

    b: BatchBuilder
    user: str
    key: str  # what the variant draws hash, the same in every shape (the conversation)
    speakers: frozenset[str]
    stamp: dict[str, str] = field(default_factory=dict)  # scope attributes of every operation
    live: dict[str, Memory] = field(default_factory=dict)
    steps: list[Step] = field(default_factory=list)
    counter: int = 0

    def extract(self, messages: list[str], facts: list[str], sid: str) -> tuple[str, list[str]]:
        """One ``extract_facts`` over a session's turns; returns the op and the fact units."""
        units = [self.b.unit("memory", f, user_id=self.user) for f in facts]
        op = self.b.op(EXTRACT, "extraction", SYSTEM, messages, units, session_id=sid, **self.stamp)
        self.steps.append(Step(op, "EXTRACT", tuple(units), ()))
        return op, units

    def _ranked(self, fact: str) -> list[tuple[float, Memory]]:
        scored = [(similarity(fact, m.text, self.speakers), m) for m in self.live.values()]
        return sorted(scored, key=lambda sm: (-sm[0], sm[1].memory_id))

    def match(self, fact: str, speaker: str) -> tuple[str, Memory | None]:
        """The rule's verdict on ``fact`` before it is applied: (NONE/DELETE/UPDATE/ADD, match)."""
        same = [(s, m) for s, m in self._ranked(fact) if m.speaker == speaker]
        if not same:
            return "ADD", None
        score, best = same[0]
        fact_words = words(fact, self.speakers)
        if score >= DUPLICATE or (fact_words and fact_words <= words(best.text, self.speakers)):
            return "NONE", best
        shared = names(fact, self.speakers) & names(best.text, self.speakers)
        if score >= RELATED or (shared and score >= RELATED_NAMED):
            return ("DELETE" if RETRACTION.search(fact) else "UPDATE"), best
        return "ADD", None

    def decide(
        self,
        fact_unit: str,
        speaker: str,
        sid: str,
        wrong_delete: Callable[[Memory], bool] = lambda m: False,
    ) -> str:
        """Apply the rule to one extracted fact; ``wrong_delete(match)`` turns a related UPDATE
        into a DELETE (an injected fault). Returns the decision operation's id."""
        fact = self.b.content[fact_unit]
        event, best = self.match(fact, speaker)
        if event == "UPDATE" and best is not None and wrong_delete(best):
            event = "DELETE"
        inputs = [fact_unit, *(m.unit for _, m in self._ranked(fact)[:SIMILAR])]
        if best is not None and best.unit not in inputs:
            inputs.append(best.unit)
        if event == "NONE":
            return self._op(inputs, [], "NONE", (fact_unit,), sid)
        if event == "ADD" or best is None:
            added = self._new(fact, speaker)
            return self._op(inputs, [added.unit], "ADD", (fact_unit,), sid)
        if event == "DELETE":
            tomb = self.b.unit("tombstone", "DELETED", memory_id=best.memory_id, user_id=self.user)
            del self.live[best.memory_id]
            added = self._new(fact, speaker)
            return self._op(inputs, [tomb, added.unit], "DELETE", (fact_unit, best.unit), sid)
        return self._update(best, fact, fact_unit, inputs, sid)

    def _update(
        self, memory: Memory, fact: str, fact_unit: str, inputs: list[str], sid: str
    ) -> str:
        draw = _draw(self.key, memory.number, memory.version)
        variant = MERGED if draw < 0.5 else OVERWRITTEN if draw < 0.75 else DROPPED
        kept = dropped_detail(memory.text) if variant == DROPPED else ""
        if variant == DROPPED and not kept:
            variant = OVERWRITTEN
        text = {MERGED: f"{memory.text} {fact}", OVERWRITTEN: fact, DROPPED: f"{kept} {fact}"}
        old = memory.unit
        memory.text, memory.version = text[variant], memory.version + 1
        memory.unit = self.b.unit(
            "memory", memory.text, memory_id=memory.memory_id, user_id=self.user
        )
        return self._op(inputs, [memory.unit], f"UPDATE:{variant}", (fact_unit, old), sid)

    def _new(self, fact: str, speaker: str) -> Memory:
        self.counter += 1
        memory_id = f"mem-{self.user}-{self.counter:04d}"
        unit = self.b.unit("memory", fact, memory_id=memory_id, user_id=self.user)
        memory = Memory(memory_id, self.counter, speaker, unit, fact)
        self.live[memory_id] = memory
        return memory

    def _op(
        self, inputs: list[str], outputs: list[str], event: str, died: tuple[str, ...], sid: str
    ) -> str:
        op = self.b.op(
            DECIDE,
            "update",
            SYSTEM,
            inputs,
            outputs,
            session_id=sid,
            event=event.split(":")[0],
            **self.stamp,
        )
        born = tuple(u for u in outputs if self.b.content[u] != "DELETED")
        self.steps.append(Step(op, event, born, died))
        return op
