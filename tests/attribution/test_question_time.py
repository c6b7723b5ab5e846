"""Question time is when this question read the memory, in-process (no Neo4j): a memory that
keeps what earlier turns said (an agent's reply written back to its session) puts those turns'
reads on the answer's lineage, behind the operation that stored them; they neither set question
time nor take the blame for this answer's context."""

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


def _conversation(reply_stored: bool) -> dict[str, Any]:
    units = [
        unit_json("q1", "query", "Hi, how are you?"),
        unit_json("ctx1", "context", ""),
        unit_json("ans1", "answer", "Hello! All good."),
        unit_json("reply", "memory", "assistant: Hello! All good."),
        unit_json("msg", "message", "Ann: I moved to Porto in May."),
        unit_json("fact", "memory", "Ann moved to Porto in May."),
        unit_json("q2", "query", "Where did Ann move in May?"),
        unit_json("ctx2", "context", "assistant: Hello! All good."),
        unit_json("ans2", "answer", "I don't know."),
    ]
    ops = [
        # the first turn reads an empty store, before anything about Porto was said
        op_json("search-1", "retrieval", 0, ["q1"], ["ctx1"]),
        op_json("answer-1", "response", 1, ["q1", "ctx1"], ["ans1"]),
        op_json("store-reply", "extraction", 2, ["ans1"] if reply_stored else [], ["reply"]),
        op_json("extract", "extraction", 3, ["msg"], ["fact"]),
        op_json("search-2", "retrieval", 5, ["q2", "fact", "reply"], ["ctx2"]),
        op_json("answer-2", "response", 6, ["q2", "ctx2"], ["ans2"]),
    ]
    case = {
        "id": "case-2",
        "question": "Where did Ann move in May?",
        "expected_answer": "Porto",
        "verdict": "failed",
        "answer_unit": "ans2",
    }
    return {"project": "p", "units": units, "operations": ops, "cases": [case]}


def _blamed(reply_stored: bool) -> tuple[str | None, str | None]:
    async def run() -> tuple[str | None, str | None]:
        batch = _conversation(reply_stored)
        source = BatchSource(batch)
        graph = CaseGraph()
        graph.add(source.ancestors("ans2"))
        facts = CaseFacts(
            "case-2", "Where did Ann move in May?", "Porto", "failed", "ans2", ("msg",)
        )
        judge = CachedJudge(Scripted({"msg": 1.0, "fact": 1.0}))
        result = await attribute(facts, graph, judge, source)
        return result.error_type, result.operation.id if result.operation else None

    return asyncio.run(run())


def test_an_earlier_turn_stored_in_the_memory_is_not_this_questions_read() -> None:
    # without the stored reply the earlier turn is not on the lineage at all
    assert _blamed(reply_stored=False) == ("RetrievalError", "search-2")
    # with it, search-1 is an ancestor of the answer (reply <- ans1 <- answer-1 <- search-1) and
    # read before the fact was stored; the question's own search is still the one to blame
    assert _blamed(reply_stored=True) == ("RetrievalError", "search-2")
