"""Following the information forward through the operations that build the memory.

Where every operation that took a carrier produced none, the information was lost there. A memory
entry's versions share ``attributes.memory_id`` (or ``entry_id``): only the operation producing
the entry's next version or its tombstone can lose it. Single-successor chains are bisected.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from service.attribution.graph import CaseGraph, Node
from service.attribution.models import ErrorType
from service.attribution.walk import NO_UNIT, Walk, evidence_copies, holds_copy
from service.text import content_tokens


@dataclass
class Loss:
    operation: str
    error_type: ErrorType
    path: list[str]
    confidence: float


def _loss_type(graph: CaseGraph, op_id: str) -> ErrorType:
    op = graph.operations[op_id]
    if op.kind == "deletion" or any(
        graph.units.get(y, NO_UNIT).kind == "tombstone" for y in graph.outputs.get(op_id, ())
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


def loss_reason(graph: CaseGraph, loss: Loss) -> str:
    lost = loss.path[-2] if len(loss.path) >= 2 else loss.path[-1]
    verbs = {
        "ExtractionError": "did not capture it into any output",
        "UpdateError": "produced a version that no longer carries it",
        "DeletionError": "deleted the memory carrying it",
    }
    return f"{lost} carried the information; {loss.operation} {verbs[loss.error_type]}"


def builders(walk: Walk, unit_id: str, question_time: float) -> list[str]:
    """Operations that consumed the unit while building the memory, before the question."""
    systems = walk.scope.systems
    ops = [
        o
        for o in walk.graph.building_consumers(unit_id)  # no READ_KINDS operation
        if walk.op_sort_key(o)[0] <= question_time
        # another pipeline reading the same message builds another memory, not this one
        and (
            not systems
            or not walk.graph.operations[o].system
            or walk.graph.operations[o].system in systems
        )
    ]
    return sorted(set(ops), key=walk.op_sort_key)


def _successor(walk: Walk, unit: Node, question_time: float) -> tuple[str, list[str]] | None:
    """For a memory-entry version: the operation producing its next version (or tombstone)."""
    for op in builders(walk, unit.id, question_time):
        nxt = [
            y
            for y in walk.graph.outputs.get(op, ())
            if (n := walk.graph.units.get(y))
            and n.entry == unit.entry
            and n.kind in (unit.kind, "tombstone")
        ]
        if nxt:
            return op, nxt
    return None


def _sole_step(walk: Walk, unit: Node, question_time: float) -> tuple[str, str] | None:
    """The one operation and output a unit turns into, when it is a plain chain link."""
    if unit.entry:
        found = _successor(walk, unit, question_time)
        if found and len(found[1]) == 1 and walk.graph.units[found[1][0]].kind == unit.kind:
            return found[0], found[1][0]
        return None
    ops = builders(walk, unit.id, question_time)
    if len(ops) != 1:
        return None
    outs = walk.graph.outputs.get(ops[0], ())
    if len(outs) == 1 and (n := walk.graph.units.get(outs[0])) and n.kind == unit.kind:
        return ops[0], outs[0]
    return None


def is_live(walk: Walk, unit: Node, question_time: float) -> bool:
    """Whether a memory unit was still in the store at question time: made before it, and no
    later version (or tombstone) of its entry, and nothing building on it, before it either."""
    made = [walk.op_sort_key(op)[0] for op in walk.graph.producers.get(unit.id, [])]
    if made and min(made) > question_time:
        return False
    if unit.entry:
        return _successor(walk, unit, question_time) is None
    return not builders(walk, unit.id, question_time)


async def _bisect_chain(walk: Walk, start: str, question_time: float) -> tuple[str, list[str]]:
    """Skip along a chain of single successors to its last carrier; returns it and the path."""
    chain, ops = [start], []
    while (step := _sole_step(walk, walk.graph.units[chain[-1]], question_time)) is not None:
        ops.append(step[0])
        chain.append(step[1])
        if len(chain) > 100_000:
            break
    lo, hi = 0, len(chain) - 1  # chain[lo] carries; find the last index that does
    copies = evidence_copies(walk.question)
    if copies and holds_copy(walk.graph.units[start].content, copies):
        # A window (a buffer that appends and drops its oldest text) keeps the evidence's line
        # until an update pushes it out. The versions holding the copy carry; the first one
        # without it carries only if another of its segments states the answer, else the
        # update that made it lost the information. Bisecting past it would trust the judge
        # on every later, longer version to find nothing by chance.
        while lo < hi and holds_copy(walk.graph.units[chain[lo + 1]].content, copies):
            lo += 1
        await walk.carries([chain[lo]])  # recorded as a carrier, as sure as the evidence
        if lo < hi and not (await walk.carries([chain[lo + 1]])).get(chain[lo + 1]):
            hi = lo
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


async def follow(
    walk: Walk, evidence: list[str], question_time: float
) -> tuple[list[list[str]], list[Loss]]:
    """Paths to carriers still live at question time, and the points where carriers were lost."""
    live: list[list[str]] = []
    losses: list[Loss] = []
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
                losses.append(Loss(op, "DeletionError", [*path, op], walk.confidence_of(last)))
                continue
            verdicts = await walk.carries(versions)
            kept = [v for v in versions if verdicts.get(v)]
            if kept:
                queue.extend([*path, op, v] for v in kept)
            else:
                conf = min([walk.confidence_of(last)] + [walk.confidence_of(v) for v in versions])
                losses.append(Loss(op, _version_loss_type(walk.graph, op), [*path, op], conf))
            continue
        took = builders(walk, last, question_time)
        if not took:
            live.append(path)
            continue
        outputs = {op: walk.graph.outputs.get(op, ()) for op in took}
        made = [y for ys in outputs.values() for y in ys]
        walk.take_copies(last, made)
        verdicts = await walk.carries(made)
        carried = [(op, y) for op, ys in outputs.items() for y in ys if verdicts.get(y)]
        if carried:
            queue.extend([*path, op, y] for op, y in carried)
            continue
        op = _likeliest_loss(walk, last, took, outputs)
        conf = min([walk.confidence_of(last)] + [walk.confidence_of(y) for y in outputs[op]])
        losses.append(Loss(op, _loss_type(walk.graph, op), [*path, op], conf))
    return live, losses


def _likeliest_loss(
    walk: Walk, lost: str, took: list[str], outputs: dict[str, tuple[str, ...]]
) -> str:
    """Of the operations that took the carrier ``lost`` and produced none (several extractors
    reading the same message, say), the one whose role was to keep it: the one whose outputs
    restate most of it, the earliest among equals."""
    if len(took) == 1:
        return took[0]
    speaker = _author(walk.graph.units[lost])
    if speaker:
        # Operations that each keep one speaker's facts (LoCoMo's observations, a per-user
        # extractor): the one for the message's author was the one meant to keep it.
        own = [op for op in took if _names_author(walk.graph.operations[op], speaker)]
        if len(own) == 1:
            return own[0]
    source = content_tokens(walk.graph.units[lost].content)

    def closeness(op: str) -> float:
        overlaps = [
            len(source & (have := content_tokens(walk.graph.units[y].content)))
            / max(1, min(len(source), len(have)))
            for y in outputs[op]
            if y in walk.graph.units
        ]
        return max(overlaps, default=0.0)

    return max(took, key=lambda op: (closeness(op), -walk.op_sort_key(op)[0]))


_AUTHOR = re.compile(r"^\s*([^:\n]{1,40}):\s")


def _author(unit: Node) -> str:
    """Who said a message: its ``speaker``/``role``/``author`` attribute, else a ``Name:``
    prefix of its content; lower-cased, empty when unknown."""
    for key in ("speaker", "author", "role"):
        value = unit.attributes.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip().lower()
    match = _AUTHOR.match(unit.content)
    return match.group(1).strip().lower() if match else ""


def _names_author(op: Node, author: str) -> bool:
    return any(isinstance(v, str) and v.strip().lower() == author for v in op.attributes.values())
