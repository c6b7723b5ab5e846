"""An LLM answer that lists a carrying fact word for word carries it, whatever the judge makes
of it as a whole, in-process (no Neo4j): Mem0's deciding call answers one JSON of every fact of
a session with its event, and a judge reading that long unit can find its other lines off the
question (the heuristic discounts a line whose neighbours are)."""

from __future__ import annotations

import asyncio
import json

from benchmarks.attribution.inprocess import BatchSource
from service.attribution.engine import attribute
from service.attribution.graph import CaseGraph
from service.attribution.judges.base import CachedJudge
from service.attribution.walk import CaseFacts
from tests.support.scripted_judge import Scripted
from tests.support.traces import op_json, unit_json

FACT = 'Ann moved to "Casa Azul" in Porto in May.'  # JSON quotes it as \"Casa Azul\"
OTHER = "Ann likes the sea."


def _attributed(scores: dict[str, float]) -> tuple[str | None, str | None]:
    decision = {"memory": [{"id": "0", "text": t, "event": "ADD"} for t in (FACT, OTHER)]}
    units = [
        unit_json("msg", "message", 'Ann: we moved into "Casa Azul" in Porto in May!'),
        unit_json("fact-1", "answer", FACT),
        unit_json("fact-2", "answer", OTHER),
        unit_json("decision", "answer", json.dumps(decision)),
        unit_json("m1", "memory", FACT, memory_id="m-1"),
        unit_json("m2", "memory", OTHER, memory_id="m-2"),
        unit_json("q", "query", "Where did Ann move in May?"),
        unit_json("ctx", "context", OTHER),
        unit_json("ans", "answer", "I don't know."),
    ]
    ops = [
        op_json("extract", "extraction", 1, ["msg"], ["fact-1", "fact-2"]),
        op_json("decide", "update", 2, ["fact-1", "fact-2"], ["decision"]),
        op_json("write", "update", 3, ["decision"], ["m1", "m2"]),
        op_json("search", "retrieval", 8, ["q", "m2"], ["ctx"]),
        op_json("respond", "response", 9, ["q", "ctx"], ["ans"]),
    ]
    case = {"id": "c", "question": "Where did Ann move in May?", "expected_answer": "Porto",
            "verdict": "failed", "answer_unit": "ans"}  # fmt: skip
    batch = {"project": "p", "units": units, "operations": ops, "cases": [case]}
    source = BatchSource(batch)
    graph = CaseGraph()
    graph.add(source.ancestors("ans"))
    facts = CaseFacts("c", case["question"], "Porto", "failed", "ans", ("msg",))
    result = asyncio.run(attribute(facts, graph, CachedJudge(Scripted(scores)), source))
    return result.error_type, result.operation.id if result.operation else None


def test_a_json_answer_listing_the_fact_kept_it() -> None:
    # the judge finds the turn, the fact and the memory carrying, and not the JSON decision
    assert _attributed({"msg": 1.0, "fact-1": 1.0, "m1": 1.0}) == ("RetrievalError", "search")


def test_an_answer_without_the_fact_lost_it() -> None:
    # the decision kept the fact (a copy of it); the write making its memory lost it
    assert _attributed({"msg": 1.0, "fact-1": 1.0}) == ("UpdateError", "write")
