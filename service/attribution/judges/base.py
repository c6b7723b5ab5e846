"""The judge protocol the attribution walk calls, and the per-case cache around it."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol

from service.attribution.confidence import UNMEASURED_LLM_VERDICT
from service.attribution.models import JudgeInfo
from service.llm.models import Cost


@dataclass(frozen=True)
class Question:
    """What a judge knows about the case: never the ground truth, only what the user stored."""

    case_id: str
    question: str
    expected_answer: str
    wrong_answer: str
    evidence_texts: tuple[str, ...] = ()
    evidence_times: tuple[datetime | None, ...] = ()  # when each evidence text was recorded


@dataclass(frozen=True)
class UnitText:
    """A unit as a judge reads it: ``content`` includes text the trace kept in attributes;
    ``ts`` is when it was recorded (what "yesterday" in it is relative to), when known."""

    id: str
    kind: str
    content: str
    ts: datetime | None = None


@dataclass(frozen=True)
class Verdict:
    """``carries`` is True/False, or None when the judge could not tell (budget, bad answer)."""

    carries: bool | None
    confidence: float  # how often a verdict like this is right (see the judge)
    source: str  # "heuristic", "llm" or "cache"
    score: float | None = None  # the heuristic's carry score, to rank carriers by


class Judge(Protocol):
    """Anything that can judge a list of units for one question."""

    @property
    def kind(self) -> str: ...

    @property
    def model(self) -> str | None: ...

    @property
    def cost(self) -> Cost: ...

    async def judge(self, question: Question, units: list[UnitText]) -> dict[str, Verdict]:
        """A verdict for every unit in ``units`` (one LLM call at most for the whole list)."""
        ...


def judge_info(judge: Judge) -> JudgeInfo:
    """How a result reports ``judge``: its own ``info()`` (the LLM judge counts what the LLM
    gave), else a judge that asks no LLM."""
    info = getattr(judge, "info", None)
    if callable(info):
        result = info()
        assert isinstance(result, JudgeInfo)
        return result
    kind = judge.kind if judge.kind in ("llm", "llm-all") else "heuristic"
    return JudgeInfo(kind=kind, model=judge.model)


@dataclass
class HeuristicStandIn:
    """What an ``llm`` or ``llm-all`` request gets when the project's judge check found the
    configured model below ``MEMTRACE_LLM_MIN_ACCURACY`` (or gave no usable verdict): the
    heuristic judges, the LLM is not asked, and every result says so. A model worse than the
    heuristic can then never make an llm result worse than the heuristic's.

    Its ``kind`` is ``heuristic``, since that is what decides; ``requested`` is the llm judge
    asked for and ``stood_down`` why it was not used (the check's outcome)."""

    inner: Judge
    requested: str
    model: str | None
    stood_down: str

    @property
    def kind(self) -> str:
        return "heuristic"

    @property
    def cost(self) -> Cost:
        return self.inner.cost

    def info(self) -> JudgeInfo:
        return JudgeInfo(
            kind="heuristic",
            model=self.model,
            requested="llm-all" if self.requested == "llm-all" else "llm",
            stood_down=self.stood_down,
            warning=f"{self.stood_down}: the LLM is not asked and this result rests on the "
            "heuristic judge",
        )

    async def judge(self, question: Question, units: list[UnitText]) -> dict[str, Verdict]:
        return await self.inner.judge(question, units)


@dataclass
class CachedJudge:
    """Wraps a judge so that no unit is judged twice for the same case."""

    inner: Judge
    cache: dict[str, Verdict] = field(default_factory=dict)

    @property
    def kind(self) -> str:
        return self.inner.kind

    @property
    def model(self) -> str | None:
        return self.inner.model

    @property
    def cost(self) -> Cost:
        return self.inner.cost

    @property
    def verdict_confidence(self) -> float:
        """What an LLM verdict of the inner judge is worth (see ``LLMJudge``)."""
        value = getattr(self.inner, "verdict_confidence", UNMEASURED_LLM_VERDICT)
        return float(value)

    def info(self) -> JudgeInfo:
        return judge_info(self.inner)

    async def judge(self, question: Question, units: list[UnitText]) -> dict[str, Verdict]:
        fresh = [u for u in units if u.id not in self.cache]
        if fresh:
            self.cache.update(await self.inner.judge(question, fresh))
        return {u.id: self.cache[u.id] for u in units}

    async def carries(self, question: Question, unit: UnitText) -> bool | None:
        return (await self.judge(question, [unit]))[unit.id].carries
