"""One round of the closed loop end to end (``benchmarks.closed_loop``): the memory system on two
LoCoMo conversations against the simulated model over HTTP, the running service attributing and
optimising, and the next run with the new prompt versions raising held-out accuracy."""

from __future__ import annotations

from typing import Any

from memtrace_client import MemTraceClient

from benchmarks.closed_loop import run_loop
from benchmarks.closed_loop_model import DATE_RULE, respond
from tests.support.llm_server import ScriptedLLM
from tests.support.servers import ServiceHandle


def test_one_round_raises_held_out_accuracy(
    llm_service: ServiceHandle, llm: ScriptedLLM, project: str
) -> None:
    llm.script["answer"] = respond  # type: ignore[attr-defined]
    figures: dict[str, Any] = run_loop(
        llm_service.url,
        llm.base_url,
        optimize=["26"],
        held_out=["30"],
        rounds=1,
        sessions=3,
        project=project,
    )
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
