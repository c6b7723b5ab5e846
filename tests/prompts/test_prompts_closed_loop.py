"""One round of the closed loop end to end (``benchmarks.closed_loop``): the memory system on two
LoCoMo conversations against the simulated model over HTTP, the running service attributing and
optimising, and the next run with the new prompt versions raising held-out accuracy."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from memtrace_client import MemTraceClient
from neo4j import Driver

from benchmarks.closed_loop.loop import run_loop
from benchmarks.closed_loop.model import DATE_RULE, EXTRACTION_MARK, respond
from benchmarks.closed_loop.system import extracted_facts
from tests.support.llm_server import ScriptedLLM
from tests.support.servers import ServiceHandle


def test_one_round_raises_held_out_accuracy(
    llm_service: ServiceHandle, llm: ScriptedLLM, project: str
) -> None:
    caps: list[object] = []

    def capped(request: dict[str, Any]) -> str:
        caps.append(request.get("max_tokens") or request.get("max_completion_tokens"))
        return respond(request)

    llm.script["answer"] = capped  # type: ignore[attr-defined]
    figures: dict[str, Any] = run_loop(
        llm_service.url,
        llm.base_url,
        optimize=["26"],
        held_out=["30"],
        rounds=1,
        sessions=3,
        project=project,
    )
    # Every call bounds its answer: the memory system's, the optimiser's and the judge's.
    assert caps and None not in caps
    [first] = figures["summary"]
    assert first["held_out_after"] > first["held_out_before"], figures
    assert first["optimized_after"] > first["optimized_before"], figures
    assert first["error_types"]["ExtractionError"] > 0
    assert "fact-extraction@1 -> fact-extraction@2" in first["optimised"]
    assert first["llm_calls"] > 0 and first["tokens"] > 0
    # The next run used the stored version: it holds the rule the feedback asked for.
    newest = MemTraceClient(llm_service.url, project=project).prompt("fact-extraction")
    assert newest.version == "fact-extraction@2" and DATE_RULE in newest.text
    assert figures["rounds"][1]["versions"]["fact-extraction"] == "fact-extraction@2"


@pytest.mark.parametrize(
    ("answer", "facts"),
    [
        ('{"facts": ["Caroline: went to a group"]}', ["Caroline: went to a group"]),
        ('```json\n{"facts": ["a", "b"]}\n```', ["a", "b"]),
        ('Here you go: {"facts": []} Anything else?', []),
        ('{"note": {"facts": "nested"}} then {"facts": ["x"]}', None),
        ("I could not find any facts worth remembering.", None),
        ('{"facts": ["cut off', None),
        ('{"facts": "one fact"}', None),
    ],
)
def test_extraction_answers_are_read_tolerantly(answer: str, facts: list[str] | None) -> None:
    assert extracted_facts(answer) == facts


def test_answers_without_json_are_counted_not_fatal(
    llm_service: ServiceHandle, llm: ScriptedLLM, project: str, neo4j_driver: Driver
) -> None:
    """A model that fences its JSON, wraps it in a sentence, or answers prose: the run goes on,
    the facts of the first two are stored, and the prose answers are counted in the figures."""
    served: Counter[str] = Counter()

    def sloppy(request: dict[str, Any]) -> str:
        said = respond(request)
        if not str(request["messages"][0]["content"]).startswith(EXTRACTION_MARK):
            return said
        served["extractions"] += 1
        if served["extractions"] % 3 == 0:
            served["prose"] += 1
            return "I could not find any facts worth remembering."
        if served["extractions"] % 3 == 1:
            return f"```json\n{said}\n```"
        return f"Here are the facts: {said} Hope this helps."

    llm.script["answer"] = sloppy  # type: ignore[attr-defined]
    figures: dict[str, Any] = run_loop(
        llm_service.url,
        llm.base_url,
        optimize=["26"],
        held_out=["30"],
        rounds=0,
        sessions=1,
        project=project,
    )
    [run] = figures["rounds"]
    splits = (run["optimized_split"], run["held_out_split"])
    assert served["prose"] > 0
    assert sum(s["unusable_extraction_answers"] for s in splits) == served["prose"]
    assert sum(s["extraction_answers"] for s in splits) == served["extractions"]
    assert all(s["asked"] > 0 for s in splits)  # the questions were still asked and judged
    # One fact per usable answer (the simulated model's rule), none for a prose one.
    memories = neo4j_driver.execute_query(
        "MATCH (u:Unit {kind: 'memory'}) WHERE u.project IN $projects RETURN count(u) AS n",
        projects=[project, f"{project}-held-out-0"],
    ).records[0]["n"]
    assert memories == served["extractions"] - served["prose"]
