"""Attributing a failed case: load its graph, walk it with a judge, store and return the result."""

from __future__ import annotations

import functools
import logging
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from neo4j import AsyncSession

from service.attribution import repository as attributions
from service.attribution import scope_repository as attribution_scope
from service.attribution.engine import attribute
from service.attribution.graph import CaseGraph, NodeRead, ScopeRead
from service.attribution.judge_check import repository as judge_checks
from service.attribution.judge_check.models import JudgeCheckResult
from service.attribution.judges.base import CachedJudge, HeuristicStandIn, Judge
from service.attribution.judges.heuristic import HeuristicJudge
from service.attribution.models import AttributeRequest, AttributionResult, JudgeKind
from service.attribution.row_cache import RowCache
from service.attribution.scope import Scope
from service.attribution.scope_reads import ScopeReads
from service.attribution.search import EndpointEmbedder
from service.attribution.shared_graph import Region
from service.attribution.walk import CaseFacts
from service.cases.models import CaseView
from service.errors import CaseNotFound, InvalidInput, NotFound
from service.llm import client as llm_client
from service.settings import Settings

if TYPE_CHECKING:
    from openai import AsyncOpenAI

    from service.attribution.judges.llm import LLMJudge

log = logging.getLogger(__name__)


@dataclass
class RepositorySource:
    """The engine's view of the rest of the graph, read through the repository.

    ``session`` is used by one case at a time (a Neo4j session is not shared by concurrent work).
    ``scope_reads``, when given, is shared by the cases of a job: a scope is read once;
    ``rows`` likewise: a node is read and decoded once (``row_cache``); ``descent``, when given, is
    the descent of the evidence its chunk has read (``shared_graph``): a case's descendants are
    taken from it when it holds them, and added to it when read.
    """

    session: AsyncSession
    project: str
    limit: int
    embedder: EndpointEmbedder | None = None
    scope_reads: ScopeReads | None = None
    rows: RowCache | None = None
    descent: Region | None = None

    async def descendants(self, unit_ids: list[str]) -> list[NodeRead]:
        if self.descent is not None and self.rows is not None:
            return await attributions.shared_descendants(
                self.session,
                self.project,
                unit_ids,
                self.limit,
                self.rows,
                self.descent,
            )
        return await attributions.descendants(
            self.session, self.project, unit_ids, self.limit, self.rows
        )

    async def scope_messages(self, scope: Scope) -> ScopeRead:
        if self.scope_reads is not None:
            return await self.scope_reads.messages(self.session, self.project, scope)
        return await attribution_scope.scope_messages(self.session, self.project, scope, self.limit)

    async def store_writes(self, scope: Scope) -> list[NodeRead]:
        return await attribution_scope.store_writes(
            self.session, self.project, scope, self.limit, self.rows
        )


@functools.cache
def _embedder(base_url: str, api_key: str, model: str, timeout_s: float) -> EndpointEmbedder:
    return EndpointEmbedder(base_url=base_url, api_key=api_key, model=model, timeout_s=timeout_s)


def embedder(settings: Settings) -> EndpointEmbedder | None:
    """The request loop's embedder (one, so its cache is shared by every case), if configured.

    Its HTTP client belongs to the request loop: the job worker makes its own (``new_embedder``).
    """
    if not settings.embeddings_base_url:
        return None
    return _embedder(
        settings.embeddings_base_url,
        settings.embeddings_api_key.get_secret_value(),
        settings.embeddings_model,
        settings.llm_timeout_s,
    )


def new_embedder(settings: Settings) -> EndpointEmbedder | None:
    """An embedder of its own, for an event loop other than the request loop."""
    if not settings.embeddings_base_url:
        return None
    return EndpointEmbedder(
        base_url=settings.embeddings_base_url,
        api_key=settings.embeddings_api_key.get_secret_value(),
        model=settings.embeddings_model,
        timeout_s=settings.llm_timeout_s,
    )


async def probe_llm(settings: Settings) -> None:
    """At start-up: one token from the configured LLM endpoint, so that a wrong URL, key or
    model is an error in the log and in ``/readyz`` before anyone asks for an llm judge."""
    if not settings.llm_base_url:
        return
    chat = llm_client.ChatClient(
        base_url=settings.llm_base_url,
        api_key=settings.llm_api_key.get_secret_value(),
        model=settings.llm_model,
        timeout_s=settings.llm_timeout_s,
    )
    try:
        message = await chat.probe()
    finally:
        await chat.aclose()
    if message:
        log.error("the llm judge cannot work: %s", message)


def llm_refusal(settings: Settings) -> str | None:
    """Why the configured LLM endpoint refuses us (its last answer), or None."""
    if not settings.llm_base_url:
        return None
    return llm_client.refusal(settings.llm_base_url, settings.llm_model)


def require_llm(settings: Settings, what: str, loc: list[str]) -> str:
    """The configured LLM endpoint's base URL; ``InvalidInput`` (422) naming the settings to
    set when there is none."""
    if not settings.llm_base_url:
        raise InvalidInput(
            f"the {what} needs an OpenAI-compatible endpoint: set "
            "MEMTRACE_LLM_BASE_URL (and MEMTRACE_LLM_API_KEY, MEMTRACE_LLM_MODEL)",
            details=[{"loc": loc, "msg": "no LLM endpoint configured"}],
        )
    return settings.llm_base_url


def llm_judge(
    settings: Settings,
    *,
    pre: Judge | None,
    ask_all: bool,
    max_calls: int,
    measured_accuracy: float | None = None,
    connections: AsyncOpenAI | None = None,
) -> LLMJudge:
    """An LLM judge on the configured endpoint, with the settings' budgets and sizes;
    ``connections`` (:func:`service.llm.client.connections`) shares one pool across judges."""
    from service.attribution.judges.llm import LLMJudge

    return LLMJudge(
        base_url=require_llm(settings, "llm judge", ["settings", "llm_base_url"]),
        api_key=settings.llm_api_key.get_secret_value(),
        model=settings.llm_model,
        timeout_s=settings.llm_timeout_s,
        max_calls=max_calls,
        max_tokens=settings.attribution_max_tokens,
        pre=pre,
        confident=settings.llm_heuristic_confidence,
        ask_all=ask_all,
        max_failures=settings.attribution_max_llm_failures,
        concurrency=settings.llm_concurrency,
        context_tokens=settings.llm_context_tokens,
        measured_accuracy=measured_accuracy,
        connections=connections,
    )


def _which(check: JudgeCheckResult) -> str:
    return "judge check" if check.recorded else "the judge check the service ran at start-up"


def check_bearing(
    check: JudgeCheckResult | None, settings: Settings
) -> tuple[float | None, str | None]:
    """What a recorded judge check of the configured model changes in its llm results: the
    confidence of an LLM verdict (its measured accuracy; None: the assumed one stays) and the
    warning every result carries when it scored below ``llm_min_accuracy``."""
    if check is None or check.model != settings.llm_model:
        return None, None
    threshold = settings.llm_min_accuracy
    if check.accuracy is None:
        return None, (
            f"model {check.model!r} gave no usable verdict on {_which(check)} "
            f"({check.failed_calls} of {check.calls} calls failed): its verdicts are unmeasured"
        )
    if check.accuracy < threshold:
        return check.accuracy, (
            f"model {check.model!r} scored {check.accuracy:.2f} on {_which(check)}, below the "
            f"threshold {threshold:.2f} (MEMTRACE_LLM_MIN_ACCURACY)"
        )
    return check.accuracy, None


def build_judge(
    request: AttributeRequest, settings: Settings, check: JudgeCheckResult | None = None
) -> Judge:
    """The judge a request asks for; the llm judge asks the heuristic one first. ``check``:
    the project's recorded judge check of the configured model, if any (``recorded_check``)."""
    if request.judge == "heuristic":
        return HeuristicJudge()
    require_llm(settings, f"{request.judge} judge", ["body", "judge"])
    confidence, warning = check_bearing(check, settings)
    if warning is not None:  # the model failed its check: its verdicts would make results worse
        return HeuristicStandIn(HeuristicJudge(), request.judge, settings.llm_model, warning)
    return llm_judge(
        settings,
        pre=HeuristicJudge(),
        ask_all=request.judge == "llm-all",
        max_calls=(
            request.max_llm_calls
            if request.max_llm_calls is not None
            else settings.attribution_max_llm_calls
        ),
        measured_accuracy=confidence,
    )


_self_checks: dict[tuple[str, str], JudgeCheckResult] = {}
"""(base URL, model) -> the judge check this process ran at start-up (``llm_self_check``)."""


def remember_self_check(settings: Settings, result: JudgeCheckResult) -> None:
    if settings.llm_base_url:
        _self_checks[(settings.llm_base_url, settings.llm_model)] = result


async def model_check(
    session: AsyncSession, project: str, settings: Settings
) -> JudgeCheckResult | None:
    """The judge check that applies to the configured model in ``project``: the project's
    recorded one, else the service's own from start-up once it has finished
    (``llm_self_check``); None when there is none (or no LLM is configured)."""
    if not settings.llm_base_url:
        return None
    recorded = await judge_checks.get(session, project, settings.llm_model)
    if recorded is not None:
        return recorded
    return _self_checks.get((settings.llm_base_url, settings.llm_model))


async def recorded_check(
    session: AsyncSession, project: str, request: AttributeRequest, settings: Settings
) -> JudgeCheckResult | None:
    """The judge check that applies (``model_check``), when the request's judge asks an LLM
    (read once per request or job, handed to ``build_judge``)."""
    if request.judge == "heuristic":
        return None
    return await model_check(session, project, settings)


def check_case(project: str, case_id: str, case: CaseView | None) -> CaseView:
    """The case if it can be attributed; ``CaseNotFound`` or ``InvalidInput`` if not."""
    if case is None:
        raise CaseNotFound(f"no case {case_id!r} in project {project!r}")
    if case.answer_unit is None:
        raise InvalidInput(
            f"case {case_id!r} has no answer_unit: there is no answer to trace back; "
            "send the case with the id of the unit holding the answer",
            details=[{"loc": ["case", case_id, "answer_unit"], "msg": "missing"}],
        )
    return case


async def attribute_inputs(
    inputs: attributions.CaseInputs,
    judge: Judge,
    source: RepositorySource,
) -> AttributionResult:
    """Walk one case's inputs (read by ``attributions.case_graph(s)``) with ``judge``.

    The caller has checked the case (``check_case``) and stores the result.
    """
    case = inputs.case
    assert case is not None and case.answer_unit is not None  # check_case
    graph = CaseGraph()
    graph.add(inputs.ancestors)
    facts = CaseFacts(
        id=case.id,
        question=case.question,
        expected_answer=case.expected_answer,
        verdict=case.verdict,
        answer_unit=case.answer_unit,
        evidence_units=tuple(case.evidence_units),
    )
    # The evidence's descent was read with the case, in the same transaction.
    descent = inputs.derived if case.evidence_units else None
    result = await attribute(facts, graph, CachedJudge(judge), source, descent)
    result.created_at = datetime.now(UTC)
    return result


async def close_judge(judge: Judge) -> None:
    """Close what a judge holds open (the llm judge's HTTP connections)."""
    close = getattr(judge, "aclose", None)
    if close is not None:
        await close()


async def attribute_case(
    session: AsyncSession,
    project: str,
    case_id: str,
    request: AttributeRequest,
    settings: Settings,
) -> AttributionResult:
    """The stored attribution unless ``refresh`` or the request names a judge other than the
    one that made it; else a new one, stored before it is returned. Asking for a judge and
    getting another's stored result without a word read as "the LLM agrees with the heuristic"."""
    if not request.refresh:
        stored = await attributions.get(session, project, case_id)
        if stored is not None and (
            "judge" not in request.model_fields_set or stored.judge.kind == request.judge
        ):
            return stored
    limit = settings.attribution_graph_limit
    inputs = await attributions.case_graph(session, project, case_id, limit)
    check_case(project, case_id, inputs.case)
    check = await recorded_check(session, project, request, settings)
    judge = build_judge(request, settings, check)
    source = RepositorySource(session, project, limit, embedder(settings))
    try:
        result = await attribute_inputs(inputs, judge, source)
    finally:
        await close_judge(judge)
    await attributions.save(session, project, result)
    return result


def attribute_request(
    body: AttributeRequest | None, judge: JudgeKind | None, refresh: bool | None, settings: Settings
) -> AttributeRequest:
    """One request from ``POST /attribute/{case_id}``'s body and its ``judge`` and ``refresh``
    query parameters (either place may name them; two different judges are refused rather than
    guessed between). A judge named in either place counts as asked for (``model_fields_set``):
    ``attribute_case`` then does not answer with another judge's stored result."""
    body = body or AttributeRequest()
    if judge is not None and "judge" in body.model_fields_set and body.judge != judge:
        raise InvalidInput(
            f"the judge query parameter ({judge!r}) and the body's judge ({body.judge!r}) differ",
            details=[{"loc": ["query", "judge"], "msg": "differs from the body's judge"}],
        )
    fields = body.model_dump(exclude_unset=True)
    if judge is not None:
        fields["judge"] = judge
    if refresh is not None:
        fields["refresh"] = refresh or body.refresh
    merged = AttributeRequest.model_validate(fields)
    if merged.judge != "heuristic":
        where = ["query", "judge"] if judge is not None else ["body", "judge"]
        require_llm(settings, f"{merged.judge} judge", where)
    return merged


async def stored_attribution(
    session: AsyncSession, project: str, case_id: str
) -> AttributionResult:
    """The case's stored attribution; ``NotFound`` when there is none (or no such case)."""
    stored = await attributions.get(session, project, case_id)
    if stored is None:
        raise NotFound(
            f"no stored attribution of case {case_id!r} in project {project!r} "
            "(POST /attribute/{case_id} makes one)"
        )
    return stored


async def list_attributions(
    session: AsyncSession, project: str, filters: dict[str, str | None], skip: int, limit: int
) -> list[AttributionResult]:
    return await attributions.list_results(session, project, filters, skip, limit)
