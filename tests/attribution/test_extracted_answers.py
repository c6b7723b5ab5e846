"""An LLM's answer that an operation building the memory produced is judged as the memory it
becomes, in-process (no Neo4j), with the heuristic judge: OpenTelemetry records an extracting
call's answer (the facts) before the write that stores them, and a trace may hold only the
memory. The same text must get the same verdict either way. A fact written the day its turn
said "last year" tells when as well as the turn did; judged as an answer it had lost the year,
and the extraction that kept it was blamed for losing it."""

from __future__ import annotations

import asyncio

from benchmarks.attribution.inprocess import BatchSource
from service.attribution.engine import attribute
from service.attribution.graph import CaseGraph
from service.attribution.judges.base import CachedJudge
from service.attribution.judges.heuristic import HeuristicJudge
from service.attribution.walk import CaseFacts
from tests.support.traces import op_json, unit_json

QUESTION = "When did Melanie read the book?"
EXPECTED = "2023"  # the year before every operation of op_json (1 January 2024)
FACT = "Melanie reminds Caroline to pursue her dreams and appreciates the power of books."


def _attributed(extracted_kind: str, write: bool) -> tuple[str | None, str | None]:
    turn = "Melanie: This book I read last year reminds me to always pursue my dreams, like you!"
    units = [
        unit_json("turn", "message", turn),
        unit_json("fact", extracted_kind, FACT),
        unit_json("mem", "memory", FACT, memory_id="m-1"),
        unit_json("other", "memory", "Caroline went to a support group.", memory_id="m-2"),
        unit_json("q", "query", QUESTION),
        unit_json("ctx", "context", "Caroline went to a support group."),
        unit_json("ans", "answer", "I don't know."),
    ]
    ops = [
        op_json("extract", "extraction", 1, ["turn"], ["fact", "other"]),
        op_json("write", "update", 2, ["fact"], ["mem"]),
        op_json("search", "retrieval", 8, ["q", "mem", "other"], ["ctx"]),
        op_json("respond", "response", 9, ["q", "ctx"], ["ans"]),
    ]
    if not write:  # the extraction's output is the memory the search reads
        units = [u for u in units if u["id"] != "mem"]
        ops = [o for o in ops if o["id"] != "write"]
        ops[1]["inputs"] = ["q", "fact", "other"]
    case = {"id": "c", "question": QUESTION, "expected_answer": EXPECTED,
            "verdict": "failed", "answer_unit": "ans"}  # fmt: skip
    batch = {"project": "p", "units": units, "operations": ops, "cases": [case]}
    source = BatchSource(batch)
    graph = CaseGraph()
    graph.add(source.ancestors("ans"))
    facts = CaseFacts("c", QUESTION, EXPECTED, "failed", "ans", ("turn",))
    result = asyncio.run(attribute(facts, graph, CachedJudge(HeuristicJudge()), source))
    return result.error_type, result.operation.id if result.operation else None


def test_a_memory_written_the_day_its_turn_was_said_tells_when() -> None:
    # the reference: the extraction writes the memory itself, the search misses it
    assert _attributed("memory", write=False) == ("RetrievalError", "search")


def test_the_extracting_calls_answer_is_judged_as_the_memory() -> None:
    # the extracting call answers the fact, a write stores it: the verdict is the memory's
    assert _attributed("answer", write=True) == ("RetrievalError", "search")
