"""Optimising a prompt from the failures blamed on it (``POST /prompts/{name}/optimize``).

TextGrad-style, as the MemTrace paper closes its loop: for each failed case whose stored
attribution blames an operation that ran with the newest version, the LLM writes feedback on the
prompt from the error type, the reason, the evidence path and the blamed operation's inputs and
outputs; the feedback is aggregated in batches (``batch_size``, 8 as in the paper's code), and the
LLM edits the prompt from the aggregated feedback, keeping its placeholders.

One optimisation per prompt runs at a time, whichever service process is asked: ``plan`` claims
the prompt in the store (``Conflict``, 409, naming the running one), ``run`` renews the claim
while it works and releases it at the end, and the store writes only while the claim is held
and the old version has no next one yet (``repository.store_optimization``).

Refused (``InvalidInput``, nothing stored): a model its judge check stands down, unless the
request forces it (the version then records what the check found); feedback or a summary cut at
its output limit (a proposal is not made from cut input); a proposal cut, empty, repeating the
current template or itself, echoing the edit request, dropping a placeholder or unchanged
(``service.prompts.proposal``). Otherwise it is stored as the next version, produced by an
``optimization`` operation that consumes the old version and is linked to the attributions it
used.

Budget (``service.prompts.budget``): the number of cases asked about is cut so that their
feedback calls, the aggregation calls and the edit fit in ``max_llm_calls``; each feedback or
aggregation call also leaves enough tokens for the edit. A transient error that eats the slack
ends the feedback phase early; the edit then works from the feedback gathered so far.
"""

from __future__ import annotations

import asyncio
import contextlib
import difflib
import json
import logging
import math
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from neo4j import AsyncSession
from openai.types.chat import ChatCompletionMessageParam

from graph_schema.prompts import OPTIMIZATION_KIND, Prompt
from ingest.rows import batch_rows
from service.attribution.service import check_bearing, model_check
from service.errors import Conflict, InvalidInput, MemTraceError
from service.llm.text import estimate_tokens, strip_fence
from service.prompts import proposal as prompts_proposal
from service.prompts import repository as repo
from service.prompts.budget import BudgetedChat, BudgetSpent, Reply, check_endpoint
from service.prompts.models import CaseFeedback, OptimizeRequest, OptimizeResult, PromptVersion
from service.prompts.service import get_prompt
from service.settings import Settings
from service.traces.models import TraceBatch

Progress = Callable[[dict[str, Any]], Awaitable[None]]
OpenSession = Callable[[], AbstractAsyncContextManager[AsyncSession]]
"""A session of its own for the claim's heartbeat, which runs beside the optimisation's."""

log = logging.getLogger(__name__)

FEEDBACK_TOKENS = 300
AGGREGATE_TOKENS = 600
MAX_UNIT_CHARS = 600
"""A blamed operation's input or output is shown to the feedback request up to this long, marked
as cut ("[... n more]"): the case's evidence, read by the model, not text a proposal is made of."""
MAX_TEMPLATE_CHARS = 20_000
"""The longest template optimised: every request carries it whole (a cut template would be
input cut to fit a budget, which the proposal may not rest on)."""
SUMMARY_ALLOWANCE_CHARS = 4000
"""What the edit's input is assumed to hold besides the prompt, when reserving tokens for it."""

ERROR_TYPES = {
    "ExtractionError": "the critical information was never captured into any memory unit",
    "UpdateError": "a memory unit held the information but a later update removed or degraded it",
    "DeletionError": "a memory unit holding the information was explicitly removed",
    "RetrievalError": "the store held the information but retrieval did not return it",
    "ResponseError": "the retrieved context held the evidence but the answer was still wrong",
}

FEEDBACK_SYSTEM = """\
You improve a prompt template used by one step of an LLM memory system.
A question was answered wrongly, and the failure was traced to an operation that ran with this \
prompt. From the failure below, write feedback on the PROMPT: what in it let this failure \
happen, and how it should change so that this kind of failure does not recur (in general, not \
only for this case). Plain text, at most 120 words."""

AGGREGATE_SYSTEM = """\
You combine feedback on one prompt template of an LLM memory system, written from several \
failures. Merge it into at most 6 concrete edit instructions for the prompt, most important \
first, one per line starting with "- ". Keep what recurs; drop what concerns a single case only."""


@dataclass(frozen=True)
class Plan:
    """What an optimisation will work on, settled before any LLM call, and the claim it holds
    on the prompt: ``operation_id`` is the claim's holder and the operation it will write;
    ``forced``, what the judge check found when ``force`` overrode it."""

    project: str
    name: str
    old: PromptVersion
    cases: list[dict[str, Any]]
    request: OptimizeRequest
    operation_id: str
    forced: str | None = None


def _q(text: Any, limit: int = MAX_UNIT_CHARS) -> str:
    text = str(text or "")
    clipped = text if len(text) <= limit else f"{text[:limit]} [... {len(text) - limit} more]"
    return json.dumps(clipped, ensure_ascii=False)


async def plan(
    session: AsyncSession, settings: Settings, project: str, name: str, request: OptimizeRequest
) -> Plan:
    """Claim prompt ``name`` and settle what to optimise: its newest version and the failed
    cases to learn from. ``NotFound`` for an unknown prompt; ``InvalidInput`` when no LLM
    endpoint is configured, the model is stood down by its judge check (unless ``force``), the
    template is too long to send whole, the filters are inconsistent or they select no case;
    ``Conflict`` naming the running optimisation when another one holds the prompt. The claim
    is released on any of these; else ``run`` releases it."""
    if request.since and request.until and request.since >= request.until:
        raise InvalidInput(
            "since must be before until",
            details=[{"loc": ["body", "since"], "msg": "not before until"}],
        )
    await get_prompt(session, project, name)  # 404 before anything is claimed
    check_endpoint(settings)
    forced = await _stood_down(session, settings, project, request)
    operation_id = f"optimization:{uuid.uuid4().hex}"
    await _claim(session, settings, project, name, operation_id)
    try:
        # Read after the claim: a version another optimisation stored just before it is seen.
        latest = (await get_prompt(session, project, name)).versions[-1]
        cases = await _cases(session, project, latest, request)
    except BaseException:
        await repo.release_claim(session, project, name, operation_id)
        raise
    return Plan(project, name, latest, cases, request, operation_id, forced)


async def _stood_down(
    session: AsyncSession, settings: Settings, project: str, request: OptimizeRequest
) -> str | None:
    """What the judge check that applies to the configured model found against it (None: it
    is not stood down); ``InvalidInput`` when it is stood down and the request does not force.
    Why the optimiser asks the judge check: a model that cannot tell whether a memory carries a
    fact (SmolLM2-135M scored 0.47) writes no better prompts, and its versions would be run."""
    _, warning = check_bearing(await model_check(session, project, settings), settings)
    if warning is None or request.force:
        return warning
    raise InvalidInput(
        f"{warning}: the model is stood down, so it writes no prompt version; nothing asked, "
        "nothing stored. Use a model that passes its judge check (memtrace judge check "
        "--record), or send force=true to write one anyway (the version then says it was "
        "forced)",
        details=[{"loc": ["body", "force"], "msg": "model stood down by its judge check"}],
    )


async def _claim(
    session: AsyncSession, settings: Settings, project: str, name: str, operation_id: str
) -> None:
    """Claim the prompt in the store, so that one optimisation per prompt runs at a time across
    every process on it; ``Conflict`` naming the running one when it is held."""
    claim = await repo.claim_optimization(
        session, project, name, operation_id, settings.job_stale_s
    )
    if not claim.claimed:
        since = f" since {claim.claimed_at.isoformat()}" if claim.claimed_at else ""
        raise Conflict(
            f"prompt {name!r} is being optimised by {claim.holder}{since}: one optimisation "
            "per prompt at a time; nothing asked, nothing stored. Ask again when it has finished",
            details=[{"loc": ["path", "name"], "msg": f"optimisation running: {claim.holder}"}],
        )


async def _cases(
    session: AsyncSession, project: str, latest: PromptVersion, request: OptimizeRequest
) -> list[dict[str, Any]]:
    if len(latest.text) > MAX_TEMPLATE_CHARS:
        raise InvalidInput(
            f"{latest.label} is {len(latest.text)} characters long, more than the "
            f"{MAX_TEMPLATE_CHARS} every request can carry whole: not optimised (a proposal "
            "made from a cut template is refused), nothing stored",
            details=[{"loc": ["prompt", "text"], "msg": f"longer than {MAX_TEMPLATE_CHARS}"}],
        )
    filters = {
        "error_types": request.error_types,
        "system": request.system,
        "since": request.since,
        "until": request.until,
    }
    cases = await repo.failed_cases(session, project, latest.id, filters, request.max_cases)
    if not cases:
        raise InvalidInput(
            f"no failed case with a stored attribution blames an operation that ran with "
            f"{latest.label} (within the filters): nothing to learn from; attribute the failed "
            "cases first (POST /attribution-jobs)",
            details=[{"loc": ["path", "name"], "msg": f"no attributed failure of {latest.label}"}],
        )
    return cases


def _units(units: list[dict[str, Any]]) -> list[str]:
    return [f"- [{u.get('kind')}] {_q(u.get('content'))}" for u in units] or ["- (none)"]


def feedback_messages(plan: Plan, case: dict[str, Any]) -> list[ChatCompletionMessageParam]:
    """The feedback request for one failed case."""
    result = json.loads(case["result"])
    error = result.get("error_type") or "unknown"
    lines = [
        f"Prompt name: {plan.name}",
        f"Prompt template: {_q(plan.old.text, MAX_TEMPLATE_CHARS)}",
        f"Error type: {error} ({ERROR_TYPES.get(error, 'not classified')})",
        f"Reason: {_q(result.get('reason'))}",
        f"Evidence path: {' -> '.join(result.get('evidence_path') or []) or '(none)'}",
        f"Blamed operation: {case['operation_name']} (kind {case['operation_kind']})",
        "Its inputs:",
        *_units(case["inputs"]),
        "Its outputs:",
        *_units(case["outputs"]),
        f"Question: {_q(case['question'])}",
        f"Expected answer: {_q(case['expected_answer'])}",
        f"Answer given: {_q(case['answer'])}",
    ]
    return [
        {"role": "system", "content": FEEDBACK_SYSTEM},
        {"role": "user", "content": "\n".join(lines)},
    ]


def aggregate_messages(plan: Plan, items: list[CaseFeedback]) -> list[ChatCompletionMessageParam]:
    lines = [f"Prompt name: {plan.name}", f"Feedback ({len(items)} failures):"]
    # Whole: each is bounded by its output cap (FEEDBACK_TOKENS), and none may be cut here.
    lines += [f"- ({f.error_type}) {json.dumps(f.feedback, ensure_ascii=False)}" for f in items]
    return [
        {"role": "system", "content": AGGREGATE_SYSTEM},
        {"role": "user", "content": "\n".join(lines)},
    ]


def edit_messages(plan: Plan, instructions: list[str]) -> list[ChatCompletionMessageParam]:
    return prompts_proposal.edit_messages(plan.name, plan.old.text, instructions)


async def _nothing(_: dict[str, Any]) -> None:
    return None


async def run(
    session: AsyncSession,
    settings: Settings,
    plan: Plan,
    open_session: OpenSession,
    progress: Progress = _nothing,
) -> OptimizeResult:
    """Ask for feedback, aggregate it, ask for the edit, check and store it; the claim is kept
    alive meanwhile (a heartbeat on a session from ``open_session``) and released at the end,
    whatever the outcome."""
    try:
        async with _heartbeat(settings, plan, open_session):
            return await _optimise(session, settings, plan, progress)
    finally:
        await repo.release_claim(session, plan.project, plan.name, plan.operation_id)


@contextlib.asynccontextmanager
async def _heartbeat(
    settings: Settings, plan: Plan, open_session: OpenSession
) -> AsyncIterator[None]:
    """Renew the claim every ``job_heartbeat_s`` while the block runs: a claim not renewed for
    ``job_stale_s`` (its process died) may be taken by another optimisation. A lost claim ends
    the beating; the store then refuses to write (``repository.store_optimization``)."""

    async def beat() -> None:
        async with open_session() as session:
            while True:
                await asyncio.sleep(settings.job_heartbeat_s)
                try:
                    owned = await repo.renew_claim(
                        session, plan.project, plan.name, plan.operation_id
                    )
                except MemTraceError as e:  # the store is away: try again at the next beat
                    log.warning("prompt optimisation heartbeat: %s", e.code)
                    continue
                if not owned:
                    log.warning("prompt optimisation %s lost its claim", plan.operation_id)
                    return

    task = asyncio.create_task(beat())
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def _optimise(
    session: AsyncSession, settings: Settings, plan: Plan, progress: Progress
) -> OptimizeResult:
    started = time.perf_counter()
    request = plan.request
    chat = BudgetedChat(settings, request.max_llm_calls, request.max_tokens)
    try:
        edit_reserve = estimate_tokens(
            edit_messages(plan, ["x" * SUMMARY_ALLOWANCE_CHARS])
        ) + prompts_proposal.edit_tokens(plan.old.text)
        cases = _affordable(plan.cases, request.batch_size, request.max_llm_calls)
        feedback = await _feedback(chat, plan, cases, edit_reserve, progress)
        if not feedback:
            raise _spent(chat, "before any feedback was written")
        summaries = await _aggregate(chat, plan, feedback, edit_reserve, progress)
        await progress({"stage": "edit", "done": 0, "total": 1})
        cap = prompts_proposal.edit_tokens(plan.old.text)
        try:
            answer = await chat.complete(edit_messages(plan, summaries), cap)
        except BudgetSpent as e:
            raise _spent(chat, f"before the edit ({e})") from e
        new_text = strip_fence(answer.text)
        prompts_proposal.check_proposal(
            plan.name, plan.old.text, new_text, answer.finish_reason, cap
        )
        await progress({"stage": "edit", "done": 1, "total": 1})
        chat.cost.seconds = round(time.perf_counter() - started, 3)
        return await _store(session, settings, plan, new_text, feedback, summaries, chat)
    finally:
        await chat.aclose()


def _refuse_cut(reply: Reply, what: str, cap: int, loc: list[str | int]) -> None:
    """``InvalidInput`` when ``reply`` (an input the proposal would be made from) was cut at
    its output cap: a proposal resting on cut feedback is refused before the edit is asked."""
    if reply.finish_reason == "length":
        raise InvalidInput(
            f"{what} was cut at its output limit (finish_reason length, at most {cap} tokens "
            "asked): refused before the edit, nothing stored; a proposal is not made from cut "
            "input (a model that runs on, or a server-side cap below that, does this)",
            details=[{"loc": [*loc, "finish_reason"], "msg": "length"}],
        )


def _affordable(cases: list[dict[str, Any]], batch: int, max_calls: int) -> list[dict[str, Any]]:
    """The most cases whose feedback, aggregation and edit calls fit in ``max_calls``."""
    k = len(cases)
    while k > 1 and k + math.ceil(k / batch) + 1 > max_calls:
        k -= 1
    return cases[:k]


def _spent(chat: BudgetedChat, when: str) -> InvalidInput:
    return InvalidInput(
        f"the optimisation budget ran out {when}: {chat.cost.llm_calls} LLM calls, "
        f"{chat.tokens_spent} tokens; nothing stored. Raise max_llm_calls or max_tokens, or "
        "lower max_cases",
        details=[{"loc": ["body", "max_llm_calls"], "msg": "budget spent"}],
    )


async def _feedback(
    chat: BudgetedChat,
    plan: Plan,
    cases: list[dict[str, Any]],
    reserve: int,
    progress: Progress,
) -> list[CaseFeedback]:
    found: list[CaseFeedback] = []
    size = plan.request.batch_size
    for i, case in enumerate(cases):
        messages = feedback_messages(plan, case)
        # After this call: one aggregation per batch so far, and the edit.
        after = (math.ceil((len(found) + 1) / size) + 1, reserve + AGGREGATE_TOKENS)
        try:
            reply = await chat.complete(messages, FEEDBACK_TOKENS, after)
        except BudgetSpent:
            break
        case_id = case["case_id"]
        what = f"the LLM's feedback from case {case_id!r}"
        _refuse_cut(reply, what, FEEDBACK_TOKENS, ["feedback", case_id])
        text = reply.text
        error = json.loads(case["result"]).get("error_type")
        found.append(
            CaseFeedback(
                case_id=case_id,
                error_type=error,
                operation_id=case["operation_id"],
                feedback=text.strip(),
            )
        )
        await progress({"stage": "feedback", "done": i + 1, "total": len(cases)})
    return found


async def _aggregate(
    chat: BudgetedChat,
    plan: Plan,
    feedback: list[CaseFeedback],
    reserve: int,
    progress: Progress,
) -> list[str]:
    """One summary per batch; a batch the budget leaves no call for keeps its raw feedback."""
    size = plan.request.batch_size
    batches = [feedback[i : i + size] for i in range(0, len(feedback), size)]
    summaries: list[str] = []
    for j, items in enumerate(batches):
        messages = aggregate_messages(plan, items)
        try:
            reply = await chat.complete(messages, AGGREGATE_TOKENS, (1, reserve))
        except BudgetSpent:
            reply = Reply("", None)
        what = f"the LLM's summary of feedback batch {j + 1}"
        _refuse_cut(reply, what, AGGREGATE_TOKENS, ["feedback_summary", j])
        text = reply.text.strip()
        summaries.append(text or "\n".join(f"- {f.feedback}" for f in items))
        await progress({"stage": "aggregate", "done": j + 1, "total": len(batches)})
    return summaries


async def _store(
    session: AsyncSession,
    settings: Settings,
    plan: Plan,
    new_text: str,
    feedback: list[CaseFeedback],
    summaries: list[str],
    chat: BudgetedChat,
) -> OptimizeResult:
    new = Prompt(plan.name, new_text)
    case_ids = [f.case_id for f in feedback]
    operation_id = plan.operation_id
    batch = TraceBatch.model_validate(
        {
            "project": plan.project,
            "units": [new.unit()],
            "operations": [
                {
                    "id": operation_id,
                    "name": "prompt.optimize",
                    "kind": OPTIMIZATION_KIND,
                    "ts": datetime.now(UTC),
                    "inputs": [plan.old.id],
                    "outputs": [new.id],
                    "attributes": {
                        "prompt": plan.old.id,
                        "prompt_name": plan.name,
                        "cases": case_ids,
                        "model": settings.llm_model,
                        **({"forced": plan.forced} if plan.forced else {}),
                        **chat.cost.model_dump(),
                    },
                }
            ],
        }
    )
    refused = await repo.store_optimization(
        session, batch_rows(batch), plan.name, plan.old.id, operation_id, case_ids
    )
    if refused is not None:
        raise _not_stored(plan, refused)
    detail = await get_prompt(session, plan.project, plan.name)
    label = next((v.label for v in detail.versions if v.id == new.id), f"{plan.name}@?")
    diff = "".join(
        difflib.unified_diff(
            plan.old.text.splitlines(keepends=True),
            new_text.splitlines(keepends=True),
            fromfile=plan.old.label,
            tofile=label,
        )
    )
    return OptimizeResult(
        name=plan.name,
        old_version=plan.old.id,
        new_version=new.id,
        new_label=label,
        operation_id=operation_id,
        text=new_text,
        diff=diff,
        feedback_summary="\n".join(summaries),
        feedback=feedback,
        cases=case_ids,
        cost=chat.cost,
        forced=plan.forced,
    )


def _not_stored(plan: Plan, refused: repo.StoreRefused) -> Conflict:
    """The 409 of a store that found the claim lost, or the old version optimised already."""
    if refused.children:
        why = f"{plan.old.label} was optimised already (by {', '.join(refused.children)})"
    else:
        why = f"its claim on prompt {plan.name!r} went stale and " + (
            f"is held by {refused.holder}" if refused.holder else "was released"
        )
    return Conflict(
        f"optimisation {plan.operation_id} not stored: {why}; one next version per version, "
        "nothing stored",
        details=[{"loc": ["path", "name"], "msg": why}],
    )
