"""A judge that carries exactly the units it is told to, and the units and operations of a
store, for the attribution tests that run in-process (no Neo4j)."""

from __future__ import annotations

from dataclasses import dataclass, field

from service.attribution.judges.base import Question, UnitText, Verdict
from service.llm.models import Cost


@dataclass
class Scripted:
    """Carries exactly the units given, each as sure as its score."""

    scores: dict[str, float]
    kind: str = "heuristic"
    model: str | None = None
    cost: Cost = field(default_factory=Cost)

    async def judge(self, question: Question, units: list[UnitText]) -> dict[str, Verdict]:
        return {
            u.id: Verdict(u.id in self.scores, 0.7, "heuristic", score=self.scores.get(u.id, 0.0))
            for u in units
        }
