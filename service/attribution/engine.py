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
   information, once lost from a chain, does not come back into it.
4. Retrieval. If a carrier is still live at question time, the store had it: the first retrieval
   operation on the answer's lineage whose output lacks it is blamed (RetrievalError).

The judge is asked about each unit at most once per case (``CachedJudge``).
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass, field
from typing import Any, Protocol

from service.attribution.graph import READ_KINDS, CaseGraph, Node
from service.attribution.judges.base import CachedJudge, Question, UnitText
from service.attribution.judges.heuristic import content_tokens
from service.attribution.models import (
    AttributionResult,
    BlamedOperation,
    Cost,
    ErrorType,
    JudgeInfo,
    Searched,
)

SEED_COUNT = 8


@dataclass(frozen=True)
class CaseFacts:
    id: str
    question: str
    expected_answer: str
    verdict: str
    answer_unit: str
    evidence_units: tuple[str, ...]


class GraphSource(Protocol):
    """Where the walk gets more of the graph; the service backs it with the repository."""

    async def descendants(self, unit_ids: list[str]) -> list[dict[str, Any]]: ...

    async def search_messages(self, query: str, k: int) -> list[tuple[str, str]]:
        """(id, content) of the ``k`` source messages that best match ``query``, best first."""
        ...


@dataclass
class _Loss:
    operation: str
    error_type: ErrorType
    path: list[str]
    confidence: float


@dataclass
class _Walk:
    case: CaseFacts
    graph: CaseGraph
    judge: CachedJudge
    question: Question
    uncertain: bool = False
    confidences: list[float] = field(default_factory=list)

    async def carries(self, unit_ids: list[str]) -> dict[str, bool]:
        units = [UnitText(n.id, n.kind, n.content) for n in self.graph.known_units(unit_ids)]
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

    def op_sort_key(self, op_id: str) -> tuple[float, str]:
        ts = self.graph.op_time(op_id)
        return (ts.timestamp() if ts else 0.0, op_id)


def _result(
    case: CaseFacts, judge: CachedJudge, started: float, graph: CaseGraph, **fields: object
) -> AttributionResult:
    cost = Cost(**judge.cost.model_dump())
    cost.seconds = round(time.perf_counter() - started, 4)
    return AttributionResult(
        case_id=case.id,
        judge=JudgeInfo(kind="llm" if judge.kind == "llm" else "heuristic", model=judge.model),
        searched=Searched(units=len(graph.units), operations=len(graph.operations)),
        cost=cost,
        **fields,  # type: ignore[arg-type,unused-ignore]
    )


def _blame(graph: CaseGraph, op_id: str) -> BlamedOperation:
    op = graph.operations[op_id]
    return BlamedOperation(id=op.id, name=op.name, kind=op.kind)


async def attribute(
    case: CaseFacts, graph: CaseGraph, judge: CachedJudge, source: GraphSource
) -> AttributionResult:
    """Walk ``graph`` (the answer's ancestors) for ``case``, fetching more from ``source``."""
    finish = functools.partial(_result, case, judge, time.perf_counter(), graph)
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
        )
    response_op = answer_ops[0]
    evidence = list(case.evidence_units)
    if evidence:  # known up front: load what derives from it, so the judge can read it
        graph.add_rows(await source.descendants(evidence))
    walk = _Walk(case, graph, judge, _question(case, graph, evidence))

    # 1. Evidence: given by the case, or searched among the source messages. Known before any
    # unit is judged, so that every verdict (cached for the case) is made with it.
    searched = not evidence
    stand_in = False
    if searched:
        evidence, stand_in = await _search_evidence(walk, source)
        if not evidence:
            return finish(
                status="unanswerable",
                reason="no source message matches what the question needs",
            )
        graph.add_rows(await source.descendants(evidence))
        walk.question = _question(case, graph, evidence)
    if stand_in:
        walk.uncertain = True  # the evidence is a best guess, not a judged carrier

    # 2. Response: the context the answer was written from already had the information.
    read = [
        u for u in graph.inputs.get(response_op, []) if graph.units.get(u, _NO_UNIT).kind != "query"
    ]
    carried = [u for u, yes in (await walk.carries(read)).items() if yes]
    if carried:
        return finish(
            status="attributed",
            error_type="ResponseError",
            operation=_blame(graph, response_op),
            confidence=walk.confidence_of(carried[0]),
            reason=f"the context {carried[0]} carries the information, yet the answer is wrong",
            evidence_path=[carried[0], response_op],
        )

    # 3. Construction: follow the information forward to question time.
    question_time = _question_time(graph, response_op)
    live, losses = await _follow(walk, evidence, question_time)
    scale = 0.85 if searched else 1.0
    if not live and losses:
        loss = min(losses, key=lambda item: walk.op_sort_key(item.operation))
        status = "inconclusive" if walk.uncertain else "attributed"
        return finish(
            status=status,
            error_type=loss.error_type,
            operation=_blame(graph, loss.operation),
            confidence=round(loss.confidence * scale, 3),
            reason=_loss_reason(graph, loss),
            evidence_path=loss.path,
        )
    if not live:
        return finish(
            status="inconclusive",
            reason="the evidence was not followed to any memory or loss point",
            evidence_path=evidence,
        )

    # 4. Retrieval: the store had it at question time, the context did not.
    blamed = await _retrieval_fault(walk, response_op)
    if blamed is None:
        return finish(
            status="inconclusive",
            reason=f"{live[0][-1]} held the information at question time, but no "
            "retrieval operation on the answer's lineage could be blamed",
            evidence_path=live[0],
        )
    return finish(
        status="inconclusive" if walk.uncertain else "attributed",
        error_type="RetrievalError",
        operation=_blame(graph, blamed),
        confidence=round(walk.confidence_of(live[0][-1]) * scale, 3),
        reason=f"{live[0][-1]} held the information at question time, but {blamed} "
        "did not put it into the context",
        evidence_path=[*live[0], blamed],
    )


_NO_UNIT = Node("", False, "other", "", "", None, None)


def _question(case: CaseFacts, graph: CaseGraph, evidence: list[str]) -> Question:
    """What the judge is told: the case, the wrong answer and the evidence's text."""
    answer = graph.units[case.answer_unit].content if case.answer_unit in graph.units else ""
    texts = tuple(n.content for n in graph.known_units(evidence))
    return Question(case.id, case.question, case.expected_answer, answer, texts)


async def _search_evidence(walk: _Walk, source: GraphSource) -> tuple[list[str], bool]:
    """Messages judged to carry the information; else the best lexical match as a stand-in
    (True), since the judge may not see an answer that is inferred or resolved from a date."""
    found = await source.search_messages(
        f"{walk.case.question} {walk.case.expected_answer}", SEED_COUNT
    )
    if not found:
        return [], False
    ranked = [mid for mid, _ in found]
    walk.graph.add_rows(
        [
            {"id": mid, "kind": "message", "content": text, "is_operation": False, "edges": []}
            for mid, text in found
        ]
    )
    verdicts = await walk.carries(ranked)
    carriers = [mid for mid in ranked if verdicts.get(mid)]
    return (carriers, False) if carriers else (ranked[:1], True)


def _question_time(graph: CaseGraph, response_op: str) -> float:
    lineage = (
        graph.ancestors_of(graph.outputs[response_op][0])
        if graph.outputs.get(response_op)
        else {response_op}
    )
    times = [
        graph.operations[o].ts
        for o in lineage
        if graph.operations[o].kind in READ_KINDS and graph.operations[o].ts
    ]
    return min(t.timestamp() for t in times if t) if times else float("inf")


def _loss_type(graph: CaseGraph, op_id: str) -> ErrorType:
    op = graph.operations[op_id]
    if op.kind == "deletion" or any(
        graph.units.get(y, _NO_UNIT).kind == "tombstone" for y in graph.outputs.get(op_id, [])
    ):
        return "DeletionError"
    if op.kind == "update":
        return "UpdateError"
    return "ExtractionError"


def _version_loss_type(graph: CaseGraph, op_id: str) -> ErrorType:
    """A new version of an entry that lost the information: typed by what the operation is."""
    kind = graph.operations[op_id].kind
    return (
        "DeletionError"
        if kind == "deletion"
        else ("ExtractionError" if kind == "extraction" else "UpdateError")
    )


def _loss_reason(graph: CaseGraph, loss: _Loss) -> str:
    lost = loss.path[-2] if len(loss.path) >= 2 else loss.path[-1]
    verbs = {
        "ExtractionError": "did not capture it into any output",
        "UpdateError": "produced a version that no longer carries it",
        "DeletionError": "deleted the memory carrying it",
    }
    return f"{lost} carried the information; {loss.operation} {verbs[loss.error_type]}"


def _builders(walk: _Walk, unit_id: str, question_time: float) -> list[str]:
    """Operations that consumed the unit while building the memory, before the question."""
    ops = [
        o
        for o in walk.graph.consumers.get(unit_id, [])
        if walk.graph.operations[o].kind not in READ_KINDS
        and walk.op_sort_key(o)[0] <= question_time
    ]
    return sorted(set(ops), key=walk.op_sort_key)


def _successor(walk: _Walk, unit: Node, question_time: float) -> tuple[str, list[str]] | None:
    """For a memory-entry version: the operation producing its next version (or tombstone)."""
    for op in _builders(walk, unit.id, question_time):
        nxt = [
            y
            for y in walk.graph.outputs.get(op, [])
            if (n := walk.graph.units.get(y))
            and n.entry == unit.entry
            and n.kind in (unit.kind, "tombstone")
        ]
        if nxt:
            return op, nxt
    return None


def _sole_step(walk: _Walk, unit: Node, question_time: float) -> tuple[str, str] | None:
    """The one operation and output a unit turns into, when it is a plain chain link."""
    if unit.entry:
        found = _successor(walk, unit, question_time)
        if found and len(found[1]) == 1 and walk.graph.units[found[1][0]].kind == unit.kind:
            return found[0], found[1][0]
        return None
    builders = _builders(walk, unit.id, question_time)
    if len(builders) != 1:
        return None
    outs = walk.graph.outputs.get(builders[0], [])
    if len(outs) == 1 and (n := walk.graph.units.get(outs[0])) and n.kind == unit.kind:
        return builders[0], outs[0]
    return None


async def _bisect_chain(walk: _Walk, start: str, question_time: float) -> tuple[str, list[str]]:
    """Skip along a chain of single successors to its last carrier; returns it and the path."""
    chain, ops = [start], []
    while (step := _sole_step(walk, walk.graph.units[chain[-1]], question_time)) is not None:
        ops.append(step[0])
        chain.append(step[1])
        if len(chain) > 100_000:
            break
    lo, hi = 0, len(chain) - 1  # chain[lo] carries; find the last index that does
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if (await walk.carries([chain[mid]])).get(chain[mid]):
            lo = mid
        else:
            hi = mid - 1
    path = [start]
    for i in range(1, lo + 1):
        path += [ops[i - 1], chain[i]]
    return chain[lo], path


async def _follow(
    walk: _Walk, evidence: list[str], question_time: float
) -> tuple[list[list[str]], list[_Loss]]:
    """Paths to carriers still live at question time, and the points where carriers were lost."""
    live: list[list[str]] = []
    losses: list[_Loss] = []
    queue: list[list[str]] = [[e] for e in evidence if e in walk.graph.units]
    seen: set[str] = set()
    while queue:
        path = queue.pop(0)
        if path[-1] in seen:
            continue
        seen.add(path[-1])
        last, tail = await _bisect_chain(walk, path[-1], question_time)
        path = path + tail[1:]
        seen.add(last)
        unit = walk.graph.units[last]
        if unit.entry:
            found = _successor(walk, unit, question_time)
            if found is None:
                live.append(path)
                continue
            op, versions = found
            if any(walk.graph.units[v].kind == "tombstone" for v in versions):
                losses.append(_Loss(op, "DeletionError", [*path, op], walk.confidence_of(last)))
                continue
            verdicts = await walk.carries(versions)
            kept = [v for v in versions if verdicts.get(v)]
            if kept:
                queue.extend([*path, op, v] for v in kept)
            else:
                conf = min([walk.confidence_of(last)] + [walk.confidence_of(v) for v in versions])
                losses.append(_Loss(op, _version_loss_type(walk.graph, op), [*path, op], conf))
            continue
        builders = _builders(walk, last, question_time)
        if not builders:
            live.append(path)
            continue
        outputs = {op: walk.graph.outputs.get(op, []) for op in builders}
        verdicts = await walk.carries([y for ys in outputs.values() for y in ys])
        carried = [(op, y) for op, ys in outputs.items() for y in ys if verdicts.get(y)]
        if carried:
            queue.extend([*path, op, y] for op, y in carried)
            continue
        op = _likeliest_loss(walk, last, builders, outputs)
        conf = min([walk.confidence_of(last)] + [walk.confidence_of(y) for y in outputs[op]])
        losses.append(_Loss(op, _loss_type(walk.graph, op), [*path, op], conf))
    return live, losses


def _likeliest_loss(
    walk: _Walk, lost: str, builders: list[str], outputs: dict[str, list[str]]
) -> str:
    """Of the operations that took the carrier ``lost`` and produced none (several extractors
    reading the same message, say), the one whose role was to keep it: the one whose outputs
    restate most of it, the earliest among equals."""
    if len(builders) == 1:
        return builders[0]
    source = content_tokens(walk.graph.units[lost].content)

    def closeness(op: str) -> float:
        overlaps = [
            len(source & (have := content_tokens(walk.graph.units[y].content)))
            / max(1, min(len(source), len(have)))
            for y in outputs[op]
            if y in walk.graph.units
        ]
        return max(overlaps, default=0.0)

    return max(builders, key=lambda op: (closeness(op), -walk.op_sort_key(op)[0]))


async def _retrieval_fault(walk: _Walk, response_op: str) -> str | None:
    """The first retrieval operation on the answer's lineage whose output lost the carrier."""
    lineage = walk.graph.ancestors_of(walk.case.answer_unit)
    retrievals = sorted(
        (o for o in lineage if walk.graph.operations[o].kind == "retrieval"), key=walk.op_sort_key
    )
    produced_by_retrieval = {y for o in retrievals for y in walk.graph.outputs.get(o, [])}
    for op in retrievals:
        outputs = walk.graph.outputs.get(op, [])
        if any((await walk.carries(outputs)).values()):
            continue
        fed = [u for u in walk.graph.inputs.get(op, []) if u in produced_by_retrieval]
        if not fed or any((await walk.carries(fed)).values()):
            return op
    return retrievals[-1] if retrievals else None
