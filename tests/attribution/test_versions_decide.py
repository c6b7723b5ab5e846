"""Update and deletion decided by versions, in-process (no Neo4j): of several carriers the
store lost, the one taken out last decides; a tombstone for the carrier's entry makes a
DeletionError even when the same operation adds another memory; a live memory that carries
less surely than a lost one did not keep the information."""

from __future__ import annotations

import asyncio
from typing import Any

from benchmarks.attribution.inprocess import BatchSource
from service.attribution.engine import attribute
from service.attribution.graph import CaseGraph
from service.attribution.judges.base import CachedJudge
from service.attribution.walk import CaseFacts
from tests.support.scripted_judge import Scripted
from tests.support.traces import op_json, unit_json


def _store() -> dict[str, Any]:
    units = [
        unit_json("msg", "message", "Ann: I moved to Porto in May."),
        unit_json("fact-a", "memory", "Ann moved to Porto in May."),
        unit_json("fact-b", "memory", "Ann lives in Porto since May."),
        unit_json("fact-c", "memory", "Ann likes the sea."),
        unit_json("a1", "memory", "Ann moved to Porto in May.", memory_id="m-a"),
        unit_json("a2", "memory", "Ann has a cat.", memory_id="m-a"),
        unit_json("b1", "memory", "Ann lives in Porto since May.", memory_id="m-b"),
        unit_json("b-gone", "tombstone", "DELETED", memory_id="m-b"),
        unit_json("c1", "memory", "Ann likes the sea.", memory_id="m-c"),
        unit_json("new", "memory", "Ann works from home.", memory_id="m-d"),
        unit_json("q", "query", "Where did Ann move in May?"),
        unit_json("ctx", "context", "Ann has a cat."),
        unit_json("ans", "answer", "I don't know."),
    ]
    ops = [
        op_json("extract", "extraction", 1, ["msg"], ["fact-a", "fact-b", "fact-c"]),
        op_json("add-a", "update", 2, ["fact-a"], ["a1"]),
        op_json("add-b", "update", 3, ["fact-b"], ["b1"]),
        op_json("add-c", "update", 4, ["fact-c"], ["c1"]),
        op_json("overwrite-a", "update", 5, ["a1"], ["a2"]),  # first carrier lost: not decisive
        op_json("delete-b", "update", 6, ["b1"], ["b-gone", "new"]),  # the last carrier: decisive
        op_json("search", "retrieval", 8, ["q", "a2", "c1", "new"], ["ctx"]),
        op_json("respond", "response", 9, ["q", "ctx"], ["ans"]),
    ]
    case = {
        "id": "case-1",
        "question": "Where did Ann move in May?",
        "expected_answer": "Porto",
        "verdict": "failed",
        "answer_unit": "ans",
    }
    return {"project": "p", "units": units, "operations": ops, "cases": [case]}


def _attribute(scores: dict[str, float]) -> tuple[str | None, str | None]:
    return asyncio.run(_attributed(scores))


async def _attributed(scores: dict[str, float]) -> tuple[str | None, str | None]:
    batch = _store()
    source = BatchSource(batch)
    graph = CaseGraph()
    graph.add(source.ancestors("ans"))
    facts = CaseFacts("case-1", batch["cases"][0]["question"], "Porto", "failed", "ans", ("msg",))
    result = await attribute(facts, graph, CachedJudge(Scripted(scores)), source)
    return result.error_type, result.operation.id if result.operation else None


def test_the_carrier_taken_out_last_decides_and_a_tombstone_is_a_deletion() -> None:
    sure = {"msg": 1.0, "fact-a": 1.0, "fact-b": 1.0, "a1": 1.0, "b1": 1.0}
    assert _attribute(sure) == ("DeletionError", "delete-b")


def test_a_live_memory_less_sure_than_a_lost_one_did_not_keep_it() -> None:
    scores = {"msg": 1.0, "fact-a": 1.0, "fact-b": 1.0, "a1": 1.0, "b1": 1.0}
    weak = {**scores, "fact-c": 0.5, "c1": 0.5}
    assert _attribute(weak) == ("DeletionError", "delete-b")
    # as sure as the lost ones: the store still had it, the search is blamed
    assert _attribute({**scores, "fact-c": 1.0, "c1": 1.0}) == ("RetrievalError", "search")
