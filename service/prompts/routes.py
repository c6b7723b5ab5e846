"""Prompt versions over HTTP: list them with their failure rates, read one with its lineage,
and optimise the newest version from the failures blamed on it."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager
from typing import Annotated, Any

from fastapi import APIRouter, Body, Query
from fastapi.responses import StreamingResponse
from neo4j import AsyncSession

from service.auth import ProjectDep
from service.dependencies import SessionDep, SettingsDep, StoresDep, project_session
from service.error_responses import responses
from service.errors import MemTraceError
from service.http_errors import error_body
from service.prompts import optimize as prompts_optimize
from service.prompts import service as prompts
from service.prompts.models import OptimizeRequest, OptimizeResult, PromptDetail, PromptSummary
from service.prompts.optimize import OpenSession, Plan
from service.settings import Settings

router = APIRouter(prefix="/prompts", tags=["prompts"])

NDJSON = "application/x-ndjson"


@router.get("", response_model=list[PromptSummary], responses=responses(503))
async def list_prompts(session: SessionDep, project: ProjectDep) -> list[PromptSummary]:
    """Every prompt of the project with its versions (oldest first): how many operations ran
    with each, how many attributed failures were blamed on those, by error type, and the rate."""
    return await prompts.list_prompts(session, project)


@router.get("/{name}", response_model=PromptDetail, responses=responses(404, 422, 503))
async def get_prompt(name: str, session: SessionDep, project: ProjectDep) -> PromptDetail:
    """Every version of prompt ``name`` with its text, placeholders and lineage: the version it
    was optimised from, the optimization operation, and the failed cases that motivated it."""
    return await prompts.get_prompt(session, project, name)


@router.post(
    "/{name}/optimize",
    response_model=OptimizeResult,
    responses={
        **responses(400, 404, 409, 422, 502, 503),
        200: {"content": {NDJSON: {}}, "description": "The result (JSON), or progress lines"},
    },
)
async def optimize_prompt(
    name: str,
    session: SessionDep,
    settings: SettingsDep,
    stores: StoresDep,
    project: ProjectDep,
    request: Annotated[OptimizeRequest | None, Body()] = None,
    stream: Annotated[
        bool,
        Query(description="Answer NDJSON: progress lines, then one result or error line."),
    ] = False,
) -> Any:
    """Propose the next version of prompt ``name`` from the failed cases whose stored
    attribution blames an operation that ran with its newest version, and store it.

    One optimisation per prompt at a time, across every service process on the store: 409
    naming the running one. Bounded by ``max_llm_calls`` and ``max_tokens``. 422 (nothing
    stored) when no case qualifies, no LLM endpoint is configured, the model is stood down by
    its judge check (unless ``force``), the budget runs out, an input of the proposal (feedback,
    its summary) was cut at its output limit, or the proposal is cut, empty, unchanged, repeats
    the current template or itself, echoes the edit request or drops a placeholder; 502 when
    the LLM endpoint refuses (wrong key or model).
    With ``stream=true`` the checks that need no LLM still answer 404/409/422; then each line is
    ``{"event": "progress", "stage", "done", "total"}``, and the last ``{"event": "result",
    "result": ...}`` or ``{"event": "error", "error", "message", "details"}``.
    """
    plan = await prompts_optimize.plan(
        session, settings, project, name, request or OptimizeRequest()
    )

    def open_session() -> AbstractAsyncContextManager[AsyncSession]:
        return project_session(stores, project)

    if not stream:
        return await prompts_optimize.run(session, settings, plan, open_session)
    return StreamingResponse(_streamed(session, settings, plan, open_session), media_type=NDJSON)


async def _streamed(
    session: AsyncSession, settings: Settings, plan: Plan, open_session: OpenSession
) -> AsyncIterator[str]:
    """Progress as it happens. Why a stream and not a job: an optimisation is short and bounded
    (tens of calls), has nothing to resume, and its caller waits for the proposal anyway."""
    events: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()

    async def progress(event: dict[str, Any]) -> None:
        await events.put({"event": "progress", **event})

    async def work() -> None:
        try:
            result = await prompts_optimize.run(session, settings, plan, open_session, progress)
            await events.put({"event": "result", "result": result.model_dump(mode="json")})
        except MemTraceError as e:
            await events.put({"event": "error", **error_body(e.code, e.message, e.details)})
        finally:
            await events.put(None)

    task = asyncio.create_task(work())
    try:
        while (event := await events.get()) is not None:
            yield json.dumps(event) + "\n"
    finally:
        await task
