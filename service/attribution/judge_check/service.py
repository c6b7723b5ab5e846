"""``memtrace judge check``: the configured model on the probe set, scored against the labels.

The model is asked as the ``llm-all`` walk asks it: one judge per question (a case's budgets of
calls, tokens and failures), no heuristic before it, the question's units in batches of
:data:`BATCH_UNITS`. What it answered is compared with how each unit was written
(:mod:`service.attribution.judge_probes`). Questions run at once; the endpoint's slots
(``MEMTRACE_LLM_CONCURRENCY``) decide how many calls are in flight, and a call's latency does not
count the wait for a slot.
"""

from __future__ import annotations

import asyncio
import logging
import math
import statistics
import time
from collections import Counter
from datetime import UTC, datetime

from neo4j import AsyncSession

from service.attribution.judge_check import repository as judge_checks
from service.attribution.judge_check.models import JudgeCheckResult, RoleScore
from service.attribution.judge_probes import PROBE_SET, Probe, probe_set
from service.attribution.judges.base import Verdict
from service.attribution.judges.llm import LLMJudge
from service.attribution.service import llm_judge, remember_self_check, require_llm
from service.errors import NotFound
from service.llm.client import connections
from service.settings import Settings

log = logging.getLogger(__name__)

BATCH_UNITS = 4
"""Units per judge call: what a walk's step asks about at once (a context and its siblings,
a memory's versions), and small enough for a small model's context."""

MALFORMED_REASONS = frozenset({"malformed", "cut at max_tokens"})
"""Failure reasons (``LLMJudge.failures``) that are an answer the judge could not use."""


async def _judge_probe(judge: LLMJudge, probe: Probe) -> dict[str, Verdict]:
    units = [p.unit for p in probe.units]
    verdicts: dict[str, Verdict] = {}
    for start in range(0, len(units), BATCH_UNITS):
        verdicts |= await judge.judge(probe.question, units[start : start + BATCH_UNITS])
    return verdicts


def _share(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def _p90(values: list[float]) -> float | None:
    """The nearest-rank 90th percentile."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[math.ceil(0.9 * len(ordered)) - 1]


def score(
    model: str,
    probes: list[Probe],
    verdicts: list[dict[str, Verdict]],
    judges: list[LLMJudge],
    seconds: float,
    min_accuracy: float,
) -> JudgeCheckResult:
    """The outcome of a run: ``verdicts[i]`` is what ``judges[i]`` gave on ``probes[i]``."""
    roles: dict[str, RoleScore] = {}
    for probe, given in zip(probes, verdicts, strict=True):
        for p in probe.units:
            role = roles.setdefault(p.role, RoleScore(units=0, answered=0, correct=0))
            carries = given[p.unit.id].carries if p.unit.id in given else None
            role.units += 1
            if carries is not None:
                role.answered += 1
                role.correct += carries == p.carries
    units = sum(r.units for r in roles.values())
    answered = sum(r.answered for r in roles.values())
    correct = sum(r.correct for r in roles.values())
    failures: Counter[str] = Counter()
    for judge in judges:
        failures.update(judge.failures)
    calls = sum(j.cost.llm_calls for j in judges)
    latencies = [s for j in judges for s in j.call_seconds]
    malformed = sum(n for why, n in failures.items() if why in MALFORMED_REASONS)
    accuracy = _share(correct, answered)
    return JudgeCheckResult(
        model=model,
        probe_set=PROBE_SET,
        questions=len(probes),
        units=units,
        answered=answered,
        correct=correct,
        accuracy=accuracy,
        answered_share=answered / units if units else 0.0,
        calls=calls,
        failed_calls=sum(failures.values()),
        malformed_calls=malformed,
        malformed_share=_share(malformed, calls),
        failed_share=_share(sum(failures.values()), calls),
        failures=dict(sorted(failures.items())),
        latency_median_s=statistics.median(latencies) if latencies else None,
        latency_p90_s=_p90(latencies),
        input_tokens=sum(j.cost.input_tokens for j in judges),
        output_tokens=sum(j.cost.output_tokens for j in judges),
        seconds=round(seconds, 3),
        by_role=roles,
        checked_at=datetime.now(UTC),
        min_accuracy=min_accuracy,
        below_threshold=accuracy is None or accuracy < min_accuracy,
    )


async def run_check(settings: Settings) -> JudgeCheckResult:
    """The configured model on the probe set. A refused endpoint (401/403/404) raises
    ``LLMEndpointRefused`` (502); every other failure is counted in the outcome."""
    base_url = require_llm(settings, "judge check", ["settings", "llm_base_url"])
    probes = probe_set()
    pool = connections(base_url, settings.llm_api_key.get_secret_value(), settings.llm_timeout_s)
    judges = [
        llm_judge(
            settings,
            pre=None,
            ask_all=True,
            max_calls=settings.attribution_max_llm_calls,
            connections=pool,
        )
        for _ in probes
    ]
    started = time.perf_counter()
    try:
        outcomes = await asyncio.gather(
            *(_judge_probe(j, p) for j, p in zip(judges, probes, strict=True)),
            return_exceptions=True,
        )
    finally:
        await pool.close()
    for outcome in outcomes:
        if isinstance(outcome, BaseException):
            raise outcome
    verdicts = [o for o in outcomes if not isinstance(o, BaseException)]
    elapsed = time.perf_counter() - started
    return score(settings.llm_model, probes, verdicts, judges, elapsed, settings.llm_min_accuracy)


async def self_check(settings: Settings) -> None:
    """At start-up (``llm_self_check``): the configured model on the probe set, once, kept in
    the process for projects without a recorded check. A model that fails it is stood down
    (``build_judge``) instead of being trusted at an assumed accuracy. Never raises: an
    endpoint that is down or refuses leaves the model unmeasured (``/readyz`` names a refusal)."""
    if not settings.llm_base_url or not settings.llm_self_check:
        return
    try:
        result = await run_check(settings)
    except Exception as e:  # a background task: say what happened and leave it unmeasured
        log.warning("judge check at start-up did not run: %s", type(e).__name__)
        return
    remember_self_check(settings, result)
    log.info(
        "judge check at start-up: model %r accuracy %s over %d answered units (%d calls)",
        settings.llm_model,
        "none" if result.accuracy is None else f"{result.accuracy:.2f}",
        result.answered,
        result.calls,
    )


async def check_judge(
    session: AsyncSession, project: str, settings: Settings, record: bool
) -> JudgeCheckResult:
    """Run the check; with ``record``, store it for ``project`` and the model."""
    result = await run_check(settings)
    if record:
        result.recorded = True
        await judge_checks.record(session, project, result)
    return result


async def recorded_judge_check(
    session: AsyncSession, project: str, model: str | None, settings: Settings
) -> JudgeCheckResult:
    """The check recorded for ``project`` and ``model`` (the configured one by default), judged
    against today's threshold; ``NotFound`` when there is none."""
    model = model or settings.llm_model
    found = await judge_checks.get(session, project, model)
    if found is None:
        raise NotFound(
            f"no judge check of model {model!r} recorded in project {project!r} "
            "(POST /judge/check with record, or memtrace judge check --record, makes one)"
        )
    found.min_accuracy = settings.llm_min_accuracy
    found.below_threshold = found.accuracy is None or found.accuracy < settings.llm_min_accuracy
    return found
