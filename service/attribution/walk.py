"""The state one attribution carries through its stages, and the helpers every stage uses."""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from dataclasses import dataclass, field

from service.attribution.graph import READ_KINDS, CaseGraph, Node
from service.attribution.judges.base import CachedJudge, Question, UnitText, Verdict
from service.attribution.scope import Scope, recorded_at
from service.text import content_tokens

NO_UNIT = Node("", False, "other", "", "", None, None)

COPY_WORDS = 3
"""A line of an evidence text is matched verbatim only when it has this many content words:
"Thanks, Mel!" recurs in any conversation; "I went to a LGBTQ support group yesterday" does not."""


COPY_JUDGED_KINDS = frozenset({"context"})
"""Kinds a verbatim copy of an evidence line does not settle: the judge reads them. A context
the answer was written from decides a ResponseError alone, and in the paper's own traces (the
SmartComment sample) contexts quote evidence lines verbatim in cases labelled as lost earlier:
with copies settling contexts too, 3 of the sample's ExtractionErrors came out ResponseErrors."""


@functools.lru_cache(maxsize=64)
def evidence_copies(question: Question) -> tuple[str, ...]:
    """The lines of the evidence texts (a message's content, its image caption) that a unit
    holding one of them verbatim has copied from the evidence."""
    lines = {
        line.strip()
        for text in question.evidence_texts
        for line in text.splitlines()
        if len(content_tokens(line)) >= COPY_WORDS
    }
    return tuple(sorted(lines))


def holds_copy(content: str, copies: tuple[str, ...]) -> bool:
    """Whether ``content`` holds one of the evidence's lines verbatim."""
    return any(line in content for line in copies)


COPY_CONFIDENCE = 1.0
"""A verbatim copy carries the information exactly when the evidence does: as sure as the
evidence, whose own confidence every result takes into account."""


@dataclass(frozen=True)
class CaseFacts:
    id: str
    question: str
    expected_answer: str
    verdict: str
    answer_unit: str
    evidence_units: tuple[str, ...]


@dataclass
class Walk:
    """One attribution in progress: the case, its graph, the judge and what it was told."""

    case: CaseFacts
    graph: CaseGraph
    judge: CachedJudge
    question: Question
    scope: Scope = field(default_factory=lambda: Scope(until=None))
    uncertain: bool = False

    async def carries(self, unit_ids: Sequence[str]) -> dict[str, bool]:
        """Whether each unit carries the information: a unit holding a line of the evidence
        verbatim (a buffer or a chunk that kept the message as it was said) carries what the
        evidence says, however long it is and however little else of it is about the question;
        the judge is asked about the others."""
        copies = evidence_copies(self.question)
        for n in self.graph.known_units(unit_ids):
            if (
                n.kind not in COPY_JUDGED_KINDS
                and n.id not in self.judge.cache
                and copies
                and holds_copy(n.content, copies)
            ):
                self.judge.cache[n.id] = Verdict(True, COPY_CONFIDENCE, "copy", score=1.0)
        units = [
            UnitText(n.id, self.judged_kind(n), n.text(), recorded_at(self.graph, n.id))
            for n in self.graph.known_units(unit_ids)
        ]
        verdicts = await self.judge.judge(self.question, units) if units else {}
        out = {}
        for uid, v in verdicts.items():
            if v.carries is None:
                self.uncertain = True
            out[uid] = bool(v.carries)
        return out

    def judged_kind(self, unit: Node) -> str:
        """The kind a judge reads the unit as: an LLM's answer that an operation building the
        memory produced (the facts an extracting call answered, as OpenTelemetry records it) is
        the memory being written, and is judged as one: dated by when it was written, as the
        memory its write stores is. The same text then gets the same verdict whether a trace
        records the call's answer or only the memory ("Melanie appreciates the power of books",
        written the day she said "this book I read last year", tells the year as a memory)."""
        if unit.kind != "answer":
            return unit.kind
        makers = self.graph.producers.get(unit.id, [])
        if makers and all(self.graph.operations[m].kind not in READ_KINDS for m in makers):
            return "memory"
        return unit.kind

    def take_copies(self, carrier: str, unit_ids: Sequence[str]) -> None:
        """Record as carrying each of ``unit_ids`` that holds the whole text of ``carrier``
        verbatim (or JSON-quoted): an LLM call answering in JSON that lists the facts it was
        given (Mem0's memory decisions: ``{"memory": [{"text": ..., "event": "ADD"}]}``) kept
        every word of them, whatever else its answer lists. Judged on its own, such an answer is
        a long unit whose other lines are about other things, and the judge discounts a line
        whose neighbours are off the question. As sure as the carrier."""
        text = self.graph.units[carrier].content.strip()
        if len(content_tokens(text)) < COPY_WORDS:
            return
        forms = (text, json.dumps(text)[1:-1], json.dumps(text, ensure_ascii=False)[1:-1])
        for n in self.graph.known_units(unit_ids):
            held = self.judge.cache.get(n.id)
            if (held is None or not held.carries) and holds_copy(n.content, forms):
                self.judge.cache[n.id] = Verdict(
                    True, self.confidence_of(carrier), "copy", score=self.strength_of(carrier)
                )

    def confidence_of(self, unit_id: str) -> float:
        verdict = self.judge.cache.get(unit_id)
        return verdict.confidence if verdict else 0.5

    def strength_of(self, unit_id: str) -> float:
        """How strongly the unit carries: the heuristic's score when it judged it, else the
        verdict's confidence (an LLM's verdict has no degrees)."""
        verdict = self.judge.cache.get(unit_id)
        if verdict is None:
            return 0.5
        return verdict.score if verdict.score is not None else verdict.confidence

    def op_sort_key(self, op_id: str) -> tuple[float, str]:
        ts = self.graph.op_time(op_id)
        return (ts.timestamp() if ts else 0.0, op_id)
