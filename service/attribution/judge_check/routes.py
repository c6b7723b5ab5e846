"""``POST /judge/check`` and ``GET /judge/check``: how well the configured LLM judges."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Body, Query

from service.attribution.judge_check import service as judge_check
from service.attribution.judge_check.models import JudgeCheckRequest, JudgeCheckResult
from service.auth import ProjectDep
from service.dependencies import SessionDep, SettingsDep
from service.error_responses import responses

router = APIRouter(tags=["judge"])


@router.post("/judge/check", response_model=JudgeCheckResult, responses=responses(422, 502, 503))
async def post_judge_check(
    session: SessionDep,
    settings: SettingsDep,
    project: ProjectDep,
    request: Annotated[JudgeCheckRequest | None, Body()] = None,
) -> JudgeCheckResult:
    """Run the configured model (MEMTRACE_LLM_*) on the built-in probe set, labelled by
    construction, and score it: accuracy on the units it answered, the share it answered, the
    share of calls that failed or gave malformed answers, latency per call and tokens. With
    ``record``, the outcome is stored for the project and the model: the project's llm
    results then take the measured accuracy as an LLM verdict's confidence, and a model below
    MEMTRACE_LLM_MIN_ACCURACY is stood down (the heuristic judges; results say so). Takes as
    long as some 15-30 judge calls."""
    record = request.record if request else False
    return await judge_check.check_judge(session, project, settings, record)


@router.get("/judge/check", response_model=JudgeCheckResult, responses=responses(404, 503))
async def get_judge_check(
    session: SessionDep,
    settings: SettingsDep,
    project: ProjectDep,
    model: Annotated[
        str | None, Query(description="The model checked; the configured one by default.")
    ] = None,
) -> JudgeCheckResult:
    """The judge check recorded for the project and the model; 404 when there is none."""
    return await judge_check.recorded_judge_check(session, project, model, settings)
