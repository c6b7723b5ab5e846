"""A heuristic result is ``attributed`` only when a stricter reading of its verdicts blames the
same operation (``service.attribution.second_reading``); over HTTP, heuristic judge, real Neo4j.

The trace: a message, the memory an extraction made of it, a search whose context left that
memory out, a wrong answer. Whether the memory carries the fact decides between the search
(RetrievalError: the store had it) and the extraction (ExtractionError: it never did)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.support.attribution import attribute
from tests.support.traces import op_json, unit_json

QUESTION = "What did Ann adopt last spring?"
ANSWER = "a grey cat named Pixel"


def _batch(project: str, memory: str) -> dict[str, Any]:
    units = [
        unit_json("msg", "message", "Ann: We adopted a grey cat last spring, her name is Pixel!"),
        unit_json("other", "message", "Ann: I started a pottery class on Tuesdays."),
        unit_json("mem", "memory", memory),
        unit_json("mem-2", "memory", "Ann takes a pottery class on Tuesdays."),
        unit_json("q", "query", QUESTION),
        unit_json("ctx", "context", "Ann takes a pottery class on Tuesdays."),
        unit_json("ans", "answer", "I don't know."),
    ]
    ops = [
        op_json("extract", "extraction", 1, ["msg"], ["mem"]),
        op_json("extract-2", "extraction", 2, ["other"], ["mem-2"]),
        op_json("search", "retrieval", 5, ["q", "mem", "mem-2"], ["ctx"]),
        op_json("respond", "response", 6, ["q", "ctx"], ["ans"]),
    ]
    case = {
        "id": "case-1",
        "question": QUESTION,
        "expected_answer": ANSWER,
        "verdict": "failed",
        "answer_unit": "ans",
        "evidence_units": ["msg"],
    }
    return {"project": project, "units": units, "operations": ops, "cases": [case]}


@pytest.mark.parametrize(
    "memory",
    [
        "Ann adopted a grey cat named Pixel last spring.",  # carries it plainly
        "Ann adopted a pet last spring, a cat.",  # at the stricter line exactly
    ],
)
def test_a_memory_carrying_it_at_both_lines_blames_the_search(
    client: httpx.Client, project: str, memory: str
) -> None:
    response = client.post("/traces", json=_batch(project, memory))
    assert response.status_code == 200, response.text
    result = attribute(client, project, "case-1").json()
    assert result["status"] == "attributed", result
    assert (result["error_type"], result["operation"]["id"]) == ("RetrievalError", "search")
    assert result["decided_by"] is None


def test_a_memory_carrying_it_only_at_the_usual_line_is_inconclusive(
    client: httpx.Client, project: str
) -> None:
    # "a pet named Pixel": the answer's name, not its grey cat; a carry score between the
    # heuristic's line (0.5) and the stricter one (0.6)
    batch = _batch(project, "Ann has a pet named Pixel.")
    response = client.post("/traces", json=batch)
    assert response.status_code == 200, response.text
    result = attribute(client, project, "case-1").json()
    # the first reading's operation is still named, but not as sure
    assert result["status"] == "inconclusive", result
    assert (result["error_type"], result["operation"]["id"]) == ("RetrievalError", "search")
    assert result["confidence"] <= 0.3
    assert "extract (ExtractionError)" in result["decided_by"]
    # and what would decide it
    assert "llm judge" in result["decided_by"]
