"""A judge that carries exactly the units it is told to, and the units and operations of a
store, for the attribution tests that run in-process (no Neo4j)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

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


def _unit(uid: str, kind: str, content: str, **attributes: Any) -> dict[str, Any]:
    return {"id": uid, "kind": kind, "content": content, "attributes": attributes or None}


def _op(oid: str, kind: str, minute: int, ins: list[str], outs: list[str]) -> dict[str, Any]:
    return {
        "id": oid,
        "kind": kind,
        "name": f"memory_system.{kind}",
        "system": "mem",
        "ts": f"2024-01-01T00:{minute:02d}:00Z",
        "inputs": ins,
        "outputs": outs,
    }
