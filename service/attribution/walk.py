"""The state one attribution carries through its stages, and the helpers every stage uses."""

from __future__ import annotations

from dataclasses import dataclass, field

from service.attribution.graph import CaseGraph, Node
from service.attribution.judges.base import CachedJudge, Question, UnitText
from service.attribution.scope import Scope, recorded_at

NO_UNIT = Node("", False, "other", "", "", None, None)


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

    async def carries(self, unit_ids: list[str]) -> dict[str, bool]:
        units = [
            UnitText(n.id, n.kind, n.text(), recorded_at(self.graph, n.id))
            for n in self.graph.known_units(unit_ids)
        ]
        verdicts = await self.judge.judge(self.question, units) if units else {}
        out = {}
        for uid, v in verdicts.items():
            if v.carries is None:
                self.uncertain = True
            out[uid] = bool(v.carries)
        return out

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
