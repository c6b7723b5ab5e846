"""The attribution walk: from a failed case to the earliest decisive faulty operation.

The stages, checked so that the first decisive fault in execution order is the one blamed:

1. Evidence. The case's ``evidence_units``, or else the source messages that best match question
   plus expected answer (BM25), kept if the judge says they carry the information. When none is
   judged to, the best match stands in and the result is at most ``inconclusive``; when nothing
   matches at all, ``unanswerable``. Evidence comes first so every verdict is made knowing it.
2. Response. If a context the answer operation read already carries the information, every
   earlier operation did its job: the answer operation is blamed (ResponseError). One judge call.
3. Construction. The information is followed forward from the evidence through the operations
   that build the memory (every kind but retrieval, response and evaluation) up to question time.
   Where every operation that took a carrier produced none, the information was lost there: an
   extraction loses it (ExtractionError), an update degrades it (UpdateError), a tombstone or a
   deletion removes it (DeletionError). A memory entry's versions share ``attributes.memory_id``
   (or ``entry_id``); only an operation producing the entry's next version or its tombstone can
   lose it. Long single-successor chains (a buffer rewritten every turn, an entry updated again
   and again) are bisected: judge calls grow with the log of the chain's length. This assumes
   information, once lost from a chain, does not come back into it. Of several losses, the one
   that took the last captured carrier out decides (``_decisive``); a live carrier less sure
   than a lost one did not keep the information (``_surest``). A loss decides nothing when a
   memory the pipeline made from another message, or one the answer's searches read or the
   store they name holds (``Scope.stores``: an OpenTelemetry search lists only what it
   returned), surely still carried it (``_redundant_carrier``).
4. Retrieval. If a carrier is still live at question time, the store had it: the first retrieval
   operation on the answer's lineage whose output lacks it is blamed (RetrievalError).

The judge is asked about each unit at most once per case (``CachedJudge``).
"""

from __future__ import annotations

import functools
import time

from graph_schema import STORE_KEY, scope_value
from service.attribution.confidence import calibrated, inconclusive_confidence
from service.attribution.construction import Loss, builders, follow, is_live, loss_reason
from service.attribution.graph import READ_KINDS, CaseGraph, NodeRead
from service.attribution.judges.base import CachedJudge, Question, Verdict
from service.attribution.models import (
    AttributionResult,
    BlamedOperation,
    Searched,
)
from service.attribution.scope import recorded_at, recorded_by, scope_of
from service.attribution.search import fuse, message_index
from service.attribution.second_reading import second_reading, stricter_judge
from service.attribution.source import GraphSource, RememberedSource
from service.attribution.walk import NO_UNIT, CaseFacts, Walk
from service.llm.models import Cost

REDUNDANT_SOURCES = 8
SURE_CARRIER = 0.8
SEED_ROUNDS = (8, 24, 64, 400)
"""Evidence candidates judged per round: the 8 best matches, then (only if none carries) the next
24, and so on. Paraphrases and answers inferred from a date rank low lexically; a second round
finds most. The last round reads most of a conversation (LoCoMo's hold 300-700 turns): with the
oracle as judge, stopping after 96 left 2-3% of cases without their evidence (a stand-in blamed,
``inconclusive``). A judge sure that a message says nothing of the question costs no LLM call in
it (``judges.llm`` asks only about unsure verdicts), so the LLM calls per case did not grow."""


def _result(
    case: CaseFacts,
    judge: CachedJudge,
    started: float,
    graph: CaseGraph,
    search: Searched,
    **fields: object,
) -> AttributionResult:
    cost = Cost(**judge.cost.model_dump())
    cost.seconds = round(time.perf_counter() - started, 4)
    if fields.get("status") == "inconclusive":  # a judge could not decide: never sure of it
        confidence = fields.get("confidence")
        fields["confidence"] = inconclusive_confidence(
            float(confidence) if isinstance(confidence, int | float) else None
        )
    return AttributionResult(
        case_id=case.id,
        judge=judge.info(),
        searched=search.model_copy(
            update={"units": len(graph.units), "operations": len(graph.operations)}
        ),
        cost=cost,
        **fields,  # type: ignore[arg-type,unused-ignore]
    )


def _blame(graph: CaseGraph, op_id: str) -> BlamedOperation:
    op = graph.operations[op_id]
    return BlamedOperation(id=op.id, name=op.name, kind=op.kind)


async def attribute(
    case: CaseFacts,
    graph: CaseGraph,
    judge: CachedJudge,
    source: GraphSource,
    evidence_descent: list[NodeRead] | None = None,
) -> AttributionResult:
    """Walk ``graph`` (the answer's ancestors) for ``case``, fetching more from ``source``.

    ``evidence_descent``: what derives from the case's evidence units, when the caller read it
    with the ancestors (in the same transaction); else it is asked of ``source``.

    A heuristic result that would say ``attributed`` is walked again with a stricter line
    (:mod:`.second_reading`), reading nothing new; it stays ``attributed`` only if that walk
    blames the same operation."""
    started = time.perf_counter()
    source = RememberedSource(source)
    ranking = _Ranking(source, Searched())
    result = await _walk_case(case, graph, judge, ranking, evidence_descent)
    stricter = stricter_judge(judge.inner)
    if result.status != "attributed" or stricter is None:
        return result
    check = await _walk_case(case, graph, CachedJudge(stricter), ranking, evidence_descent)
    result = second_reading(result, check)
    result.cost.seconds = round(time.perf_counter() - started, 4)
    return result


async def _walk_case(
    case: CaseFacts,
    graph: CaseGraph,
    judge: CachedJudge,
    ranking: _Ranking,
    evidence_descent: list[NodeRead] | None,
) -> AttributionResult:
    """One walk of the case with ``judge``; the scope's ranked messages (and what their search
    read, ``ranking.search``) come from ``ranking``."""
    source, search = ranking.source, ranking.search
    finish = functools.partial(_result, case, judge, time.perf_counter(), graph, search)
    llm_verdict = judge.verdict_confidence
    if case.verdict != "failed":
        return finish(
            status="not_failed",
            reason=f"the case's verdict is {case.verdict!r}, not 'failed'",
        )
    answer_ops = graph.producers.get(case.answer_unit, [])
    if not answer_ops:
        return finish(
            status="inconclusive",
            reason="no operation produced the answer unit: nothing to attribute",
            decided_by=f"the operation that wrote the answer unit {case.answer_unit}, recorded "
            "with it among its outputs",
        )
    response_op = answer_ops[0]
    scope = scope_of(graph, case.answer_unit, response_op)
    evidence = list(case.evidence_units)
    if evidence:  # known up front: load what derives from it, so the judge can read it
        descent = evidence_descent
        graph.add(descent if descent is not None else await source.descendants(evidence))
        # Causality: a unit recorded after the answer cannot be what the answer needed.
        evidence = [e for e in evidence if recorded_by(graph, e, scope.until)]
    walk = Walk(case, graph, judge, _question(case, graph, evidence), scope=scope)
    for unit in evidence:  # the case says these carry it: the walk starts from that, sure of it
        judge.cache[unit] = Verdict(True, 1.0, "case")

    # 1. Evidence: given by the case, or searched among the source messages. Known before any
    # unit is judged, so that every verdict (cached for the case) is made with it.
    searched = not evidence
    stand_in = False
    if searched:
        evidence, stand_in = await _search_evidence(walk, ranking)
        if not evidence:
            return finish(
                status="unanswerable",
                reason="no source message matches what the question needs",
            )
        graph.add(await source.descendants(evidence))
        walk.question = _question(case, graph, evidence)
    if stand_in:
        walk.uncertain = True  # the evidence is a best guess, not a judged carrier
    # Every result from here says what evidence it stands on: the audits read it for a case
    # without evidence_units (graph_schema/rules.py, "evidence units").
    finish = functools.partial(finish, evidence=list(evidence))

    # 2. Response: the context the answer was written from already had the information.
    read = [u for u in graph.inputs.get(response_op, ()) if not _asks(graph, u, case.question)]
    carried = [u for u, yes in (await walk.carries(read)).items() if yes]
    # How sure the verdicts every answer rests on are: the evidence (when searched for) and,
    # unless the context carried it, that the context lacks it.
    sure_evidence = 1.0 if not searched else max(walk.confidence_of(e) for e in evidence)
    sure_context = min((walk.confidence_of(u) for u in read), default=1.0)
    if carried:
        # A context that carries the information without descending from the evidence matched
        # it in words only, more often than not: it is less sure (measured on the tuning half).
        sources = {u for op in graph.ancestors_of(carried[0]) for u in graph.inputs.get(op, ())}
        linked = bool(sources & set(evidence))
        return finish(
            status="attributed",
            error_type="ResponseError",
            operation=_blame(graph, response_op),
            confidence=calibrated(
                "ResponseError" if linked else "ResponseError-unlinked",
                min(walk.confidence_of(carried[0]), sure_evidence),
                given=not searched,
                llm=judge.info().llm_verdicts > 0,
                llm_verdict=llm_verdict,
            ),
            reason=f"the context {carried[0]} carries the information, yet the answer is wrong",
            evidence_path=[carried[0], response_op],
        )

    # 3. Construction: follow the information forward to question time.
    question_time = _question_time(graph, response_op)
    live, losses = await follow(walk, evidence, question_time)
    live, losses = _surest(walk, live, losses)
    if not live and losses:
        redundant = await _redundant_carrier(walk, ranking, evidence, question_time, response_op)
        if redundant is not None:
            live = [redundant]
            if stand_in:  # a judged carrier in the store: the evidence is no longer a guess
                stand_in = False
                walk.uncertain = any(v.carries is None for v in judge.cache.values())
    if not live and losses:
        loss = _decisive(walk, losses)
        status = "inconclusive" if walk.uncertain else "attributed"
        return finish(
            status=status,
            error_type=loss.error_type,
            operation=_blame(graph, loss.operation),
            confidence=calibrated(
                loss.error_type,
                min(loss.confidence, sure_evidence, sure_context),
                given=not searched,
                llm=judge.info().llm_verdicts > 0,
                llm_verdict=llm_verdict,
            ),
            reason=loss_reason(graph, loss),
            evidence_path=loss.path,
            decided_by=_what_decides(walk, evidence, stand_in) if walk.uncertain else None,
        )
    if not live:
        return finish(
            status="inconclusive",
            reason="the evidence was not followed to any memory or loss point",
            evidence_path=evidence,
            decided_by=f"the operations that took {', '.join(evidence[:3])} in (what the memory "
            "pipeline did with it), recorded with it among their inputs",
        )

    # 4. Retrieval: the store had it at question time, the context did not.
    blamed = await _retrieval_fault(walk, response_op)
    if blamed is None:
        return finish(
            status="inconclusive",
            reason=f"{live[0][-1]} held the information at question time, but no "
            "retrieval operation on the answer's lineage could be blamed",
            evidence_path=live[0],
            decided_by="the retrieval operation that put the answer's context together, recorded "
            "with the memories it read as inputs and the context as output",
        )
    return finish(
        status="inconclusive" if walk.uncertain else "attributed",
        error_type="RetrievalError",
        operation=_blame(graph, blamed),
        confidence=calibrated(
            "RetrievalError",
            min(walk.confidence_of(live[0][-1]), sure_evidence, sure_context),
            given=not searched,
            llm=judge.info().llm_verdicts > 0,
            llm_verdict=llm_verdict,
        ),
        reason=f"{live[0][-1]} held the information at question time, but {blamed} "
        "did not put it into the context",
        evidence_path=[*live[0], blamed],
        decided_by=_what_decides(walk, evidence, stand_in) if walk.uncertain else None,
    )


def _asks(graph: CaseGraph, unit_id: str, question: str) -> bool:
    """Whether a unit the answering call read is the question rather than context: a ``query``
    unit, or a message saying nothing but the question (an OpenTelemetry chat's user message).
    Words the question shares with its answer ("the parade or the festival?") would otherwise
    read as a context carrying the answer."""
    unit = graph.units.get(unit_id, NO_UNIT)
    return unit.kind == "query" or (
        unit.kind == "message" and " ".join(unit.content.split()) == " ".join(question.split())
    )


def _what_decides(walk: Walk, evidence: list[str], stand_in: bool) -> str:
    """What would make an uncertain walk sure: the evidence named, where the judge found none
    and the best match stood in for it; else a verdict on the units the judge could not decide
    (another judge's, or the evidence named, which the judge then takes as given)."""
    other = "the llm judge" if walk.judge.info().kind == "heuristic" else "a surer judge"
    if stand_in:
        return (
            f"no source message in scope was judged to carry the answer; {evidence[0]} stood in "
            "as its best match. The case's evidence_units (the message that said it), or "
            f"{other}'s verdict on the best matches, would decide it"
        )
    undecided = sorted(u for u, v in walk.judge.cache.items() if v.carries is None)
    named = ", ".join(undecided[:3]) + (f" and {len(undecided) - 3} more" if undecided[3:] else "")
    return (
        f"a verdict on whether {named or 'the units on its path'} carry the information "
        f"({other}, or the case's evidence_units) would decide it"
    )


def _decisive(walk: Walk, losses: list[Loss]) -> Loss:
    """The loss that decided the case. Once the information was captured (a carrier some
    operation produced: an extracted fact, a memory version), the store lost it only when the
    last such carrier was taken out: the latest of those losses. Only when no capture happened
    at all is the earliest source message left uncaptured the fault."""
    captured = [x for x in losses if walk.graph.producers.get(_carrier(x))]
    if captured:
        return max(captured, key=lambda x: walk.op_sort_key(x.operation))
    return min(losses, key=lambda x: walk.op_sort_key(x.operation))


def _carrier(loss: Loss) -> str:
    """The last unit that carried the information on a loss's path."""
    return loss.path[-2] if len(loss.path) >= 2 else loss.path[-1]


def _surest(
    walk: Walk, live: list[list[str]], losses: list[Loss]
) -> tuple[list[list[str]], list[Loss]]:
    """Where the information went, by its surest carriers. A live memory that states it less
    surely than a carrier that was lost (another fact of the same message sharing some of its
    words, say) did not keep it: then only the losses of the surest carriers count. With a
    judge equally sure of every carrier (an LLM's plain verdicts) nothing is dropped."""
    if not live or not losses:
        return live, losses
    top = max(
        [walk.strength_of(p[-1]) for p in live] + [walk.strength_of(_carrier(x)) for x in losses]
    )
    kept = [p for p in live if walk.strength_of(p[-1]) >= top]
    if kept:
        return live, losses
    return [], [x for x in losses if walk.strength_of(_carrier(x)) >= top]


def _question(case: CaseFacts, graph: CaseGraph, evidence: list[str]) -> Question:
    """What the judge is told: the case, the wrong answer and the evidence's text."""
    answer = graph.units[case.answer_unit].content if case.answer_unit in graph.units else ""
    known = graph.known_units(evidence)
    texts = tuple(n.text() for n in known)
    times = tuple(recorded_at(graph, n.id) for n in known)
    return Question(case.id, case.question, case.expected_answer, answer, texts, times)


class _Ranking:
    """The case's scope messages ranked for its question, read and ranked once per case: the
    evidence search and the redundancy check both ask, and the answer is the same (the graph only
    gains nodes in between, and a unit already known is never replaced)."""

    def __init__(self, source: GraphSource, search: Searched) -> None:
        self.source = source
        self.search = search
        self._ranked: list[str] | None = None

    async def ranked(self, walk: Walk) -> list[str]:
        if self._ranked is None:
            self._ranked = await _ranked_messages(walk, self.source, self.search)
        return self._ranked


async def _ranked_messages(walk: Walk, source: GraphSource, search: Searched) -> list[str]:
    """The messages in the case's scope that best match question plus expected answer, best
    first (the :data:`SEED_ROUNDS` many); what was read goes into ``search``."""
    read = await source.scope_messages(walk.scope)
    messages = read.nodes
    search.scope = read.scope or walk.scope.named_by
    search.scope_messages = len(messages)
    search.scope_cut = read.cut
    walk.graph.add_units(messages)
    candidates = sorted({m.id for m in messages} | set(walk.scope.lineage))
    texts = [(mid, walk.graph.units[mid].text()) for mid in candidates if mid in walk.graph.units]
    query, wanted = f"{walk.case.question} {walk.case.expected_answer}", sum(SEED_ROUNDS)
    ranked = message_index(texts).rank(query, wanted)
    embedder = getattr(source, "embedder", None)
    if embedder is not None and texts:  # dense ranking finds paraphrases BM25 misses
        ranked = fuse([ranked, await embedder.rank(texts, query, wanted)], wanted)
    return ranked


async def _search_evidence(walk: Walk, ranking: _Ranking) -> tuple[list[str], bool]:
    """Messages in the case's scope judged to carry the information; else the best lexical
    match as a stand-in (True), since the judge may not see an answer that is inferred."""
    ranked = await ranking.ranked(walk)
    if not ranked:
        return [], False
    start = 0
    for size in SEED_ROUNDS:  # a wider round only when the judge saw it in none of the best
        batch = ranked[start : start + size]
        start += size
        verdicts = await walk.carries(batch)
        carriers = [mid for mid in batch if verdicts.get(mid)]
        if carriers:
            # The surest carriers only: a message that merely shares the answer's word is not
            # the evidence when another states it more fully.
            top = max(walk.strength_of(mid) for mid in carriers)
            return [mid for mid in carriers if walk.strength_of(mid) >= top], False
    return ranked[:1], True


async def _redundant_carrier(
    walk: Walk, ranking: _Ranking, evidence: list[str], question_time: float, response_op: str
) -> list[str] | None:
    """A memory of the case's own pipeline that still carried the information at question time
    although it does not descend from the evidence (another turn said it too): then losing the
    evidence's copy decided nothing, and the store had the fact. Looked for among what the
    :data:`REDUNDANT_SOURCES` best matching other messages in scope became; the path to it."""
    ranked = [m for m in await ranking.ranked(walk) if m not in evidence]
    sources = ranked[:REDUNDANT_SOURCES]
    if not sources:
        return None
    walk.graph.add(await ranking.source.descendants(sources))
    found: dict[str, list[str]] = {}
    for message in sources:
        for op in builders(walk, message, question_time):
            for out in walk.graph.outputs.get(op, ()):
                node = walk.graph.units.get(out)
                if (
                    node is not None
                    and node.kind == "memory"
                    and is_live(walk, node, question_time)
                ):
                    found.setdefault(out, [message, op, out])
    if walk.scope.stores:  # what else the stores the lineage names held (module docstring)
        walk.graph.add(await ranking.source.store_writes(walk.scope))
    for memory in _store_reads(walk, response_op, question_time, exclude=set(found)):
        found.setdefault(memory, [memory])
    verdicts = await walk.carries(sorted(found))
    # a sure carrier only: a memory sharing the answer's words by chance would move the blame
    carriers = [
        u for u in sorted(found) if verdicts.get(u) and walk.confidence_of(u) >= SURE_CARRIER
    ]
    return found[carriers[0]] if carriers else None


def _store_reads(
    walk: Walk, response_op: str, question_time: float, exclude: set[str]
) -> list[str]:
    """The :data:`REDUNDANT_SOURCES` live memories of the store that best match question plus
    expected answer: those the answer's retrievals read, and those of the stores the case's
    lineage names (``Scope.stores``, their writes read by the caller). A search that scores the
    whole store reads every memory; one that lists only what it returned (an OpenTelemetry
    ``search_memory``) names its store instead. A memory may state the fact although no message
    near the top of the evidence search became it (a later turn said it in other words), and
    then the store still had it."""
    graph = walk.graph
    stores = set(walk.scope.stores)
    reads = {
        u
        for op in _question_reads(graph, response_op)
        if graph.operations[op].kind == "retrieval"
        for u in graph.inputs.get(op, ())
        if graph.units.get(u, NO_UNIT).kind == "memory"
    }
    if stores:
        reads |= {
            u
            for u, node in graph.units.items()
            if node.kind == "memory" and scope_value(node.attributes.get(STORE_KEY)) in stores
        }
    read = sorted(reads - exclude)
    if not read:
        return []
    # ranked first, so that only the best matches are checked for being live (a whole-store
    # search reads every version ever written)
    query = f"{walk.case.question} {walk.case.expected_answer}"
    ranked = message_index([(u, graph.units[u].text()) for u in read]).rank(query, len(read))
    live: list[str] = []
    for u in ranked:
        if is_live(walk, graph.units[u], question_time):
            live.append(u)
            if len(live) == REDUNDANT_SOURCES:
                break
    return live


def _question_reads(graph: CaseGraph, response_op: str) -> frozenset[str]:
    """The operations that read the memory for this question: the answer's producer and the
    read-time operations (retrieval, response, evaluation) it reaches through read-time
    operations alone.

    An earlier turn's reads are on the answer's lineage too when the memory kept what that turn
    said (an agent's reply written back to its session, a chat history stored as messages), but
    only through an operation that builds the memory. They read the store before this question's
    facts were in it: their time is not question time, and their context is not this answer's.
    A lineage whose retrievals all sit behind a building operation (a search recorded with kind
    ``other`` between it and the answer) keeps the whole lineage's reads, as before."""
    reads = {response_op}
    stack = [response_op]
    while stack:
        for unit in graph.inputs.get(stack.pop(), ()):
            for op in graph.producers.get(unit, ()):
                if op not in reads and graph.operations[op].kind in READ_KINDS:
                    reads.add(op)
                    stack.append(op)
    if any(graph.operations[o].kind == "retrieval" for o in reads):
        return frozenset(reads)
    outputs = graph.outputs.get(response_op)
    lineage = graph.ancestors_of(outputs[0]) if outputs else frozenset()
    return frozenset(o for o in lineage | reads if graph.operations[o].kind in READ_KINDS)


def _question_time(graph: CaseGraph, response_op: str) -> float:
    """When the question read the memory: its earliest read (a query rewrite, a first search)."""
    times = [graph.operations[o].ts for o in _question_reads(graph, response_op)]
    return min(t.timestamp() for t in times if t) if any(times) else float("inf")


async def _retrieval_fault(walk: Walk, response_op: str) -> str | None:
    """The first retrieval operation of the question (:func:`_question_reads`) whose output
    lost the carrier."""
    retrievals = sorted(
        (
            o
            for o in _question_reads(walk.graph, response_op)
            if walk.graph.operations[o].kind == "retrieval"
        ),
        key=walk.op_sort_key,
    )
    produced_by_retrieval = {y for o in retrievals for y in walk.graph.outputs.get(o, ())}
    for op in retrievals:
        outputs = walk.graph.outputs.get(op, ())
        if any((await walk.carries(outputs)).values()):
            continue
        fed = [u for u in walk.graph.inputs.get(op, ()) if u in produced_by_retrieval]
        if not fed or any((await walk.carries(fed)).values()):
            return op
    return retrievals[-1] if retrievals else None
