"""The llm judge against a real model: SmolLM2-135M-Instruct behind a real llama.cpp server.

Nothing is scripted: the service talks to the model through a recording proxy
(tests/support/llm_proxy.py), so these tests see every request the judge sent and every answer
the model gave. What they check is what must hold whatever the model says: every request bounds
its answer, no answer runs past its bound, the calls per case stay within the budget, and a
result's judge counts agree with what the model actually answered. (A 135M model is a poor judge;
how good a model is, is `memtrace judge check`'s business.)
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from service.attribution.judges.llm_prompt import MalformedAnswer, parse_answer, unit_ids_in_prompt
from tests.support.attribution import attribute
from tests.support.llama_server import CONTEXT_TOKENS, LlamaServer
from tests.support.llm_proxy import Exchange, RecordingProxy, recording_proxy
from tests.support.servers import Neo4jHandle, ServiceHandle, run_service
from tests.support.traces import DEMO_TRUTH, demo_batch

MAX_CALLS = 3  # per case: keeps the module to a few minutes on a one-slot CPU server
STARTUP_PROBE_S = 300  # the timeout the service is given for one call, on a loaded machine


@pytest.fixture(scope="module")
def real(
    neo4j: Neo4jHandle, workdir: Path, llama_server: LlamaServer
) -> Iterator[tuple[ServiceHandle, RecordingProxy]]:
    with (
        recording_proxy(llama_server.base_url) as proxy,
        run_service(
            neo4j.uri,
            workdir,
            MEMTRACE_NEO4J_USER=neo4j.user,
            MEMTRACE_NEO4J_PASSWORD=neo4j.password,
            MEMTRACE_LLM_BASE_URL=proxy.base_url,
            MEMTRACE_LLM_MODEL=llama_server.model,
            MEMTRACE_LLM_CONTEXT_TOKENS=str(CONTEXT_TOKENS),
            MEMTRACE_LLM_CONCURRENCY="1",
            MEMTRACE_LLM_TIMEOUT_S="300",  # a loaded 2-core box; the budget bounds the calls
            # The model is asked here, whatever its judge check would say (SmolLM2 fails it).
            MEMTRACE_LLM_SELF_CHECK="false",
        ) as service,
    ):
        # The service probes the endpoint once as it starts, in the background (one token): wait
        # for that answer, so that it is not counted as one of the first case's calls.
        deadline = time.monotonic() + STARTUP_PROBE_S
        while not proxy.exchanges and time.monotonic() < deadline:
            time.sleep(0.1)
        assert [e.request.get("max_tokens") for e in proxy.exchanges] == [1], "no start-up probe"
        yield service, proxy


def _asked(exchange: Exchange) -> list[str]:
    user = "\n".join(
        str(m.get("content") or "") for m in exchange.request["messages"] if m["role"] == "user"
    )
    return unit_ids_in_prompt(user)


def _usable_verdicts(exchange: Exchange) -> int:
    """How many verdicts about asked units the model's answer holds (0: unusable)."""
    if exchange.response is None:
        return 0
    content = exchange.response["choices"][0]["message"]["content"] or ""
    try:
        return len(parse_answer(content, set(_asked(exchange))))
    except MalformedAnswer:
        return 0


@pytest.mark.parametrize("judge", ["llm", "llm-all"])
def test_a_real_model_is_asked_within_bounds_and_counted_honestly(
    real: tuple[ServiceHandle, RecordingProxy], project: str, judge: str
) -> None:
    service, proxy = real
    results: list[tuple[dict[str, Any], list[Exchange]]] = []
    with httpx.Client(base_url=service.url, timeout=1800) as client:
        assert client.post("/traces", json=demo_batch(project)).status_code == 200
        for case_id in ("case-1", "case-2", "case-5"):
            before = len(proxy.exchanges)
            response = attribute(client, project, case_id, judge=judge, max_llm_calls=MAX_CALLS)
            assert response.status_code == 200, response.text
            results.append((response.json(), proxy.exchanges[before:]))

    asked_any = False
    for result, exchanges in results:
        counts = result["judge"]
        assert counts["kind"] == judge
        assert counts["llm_calls"] == result["cost"]["llm_calls"] == len(exchanges) <= MAX_CALLS
        for exchange in exchanges:
            cap = exchange.request["max_tokens"]  # on every request
            assert cap > 0
            assert exchange.status == 200 and exchange.response is not None
            assert exchange.response["usage"]["completion_tokens"] <= cap  # no runaway
        usable = [_usable_verdicts(e) for e in exchanges]
        assert counts["llm_verdicts"] == sum(usable)
        assert counts["llm_failures"] == sum(1 for n in usable if n == 0)
        assert (counts["warning"] is None) == (counts["llm_verdicts"] > 0)
        if counts["llm_verdicts"] == 0:
            assert "rests on the heuristic judge" in counts["warning"]
        asked_any = asked_any or bool(exchanges)
    assert asked_any  # the model was really asked


def test_a_real_model_never_makes_a_result_fail_to_come(
    real: tuple[ServiceHandle, RecordingProxy], project: str
) -> None:
    """Whatever the model answers, every failed case of the demo gets a stored result with an
    error type from the paper's taxonomy and a blamed operation of the trace."""
    service, _ = real
    with httpx.Client(base_url=service.url, timeout=1800) as client:
        assert client.post("/traces", json=demo_batch(project)).status_code == 200
        for case_id in DEMO_TRUTH:
            result = attribute(client, project, case_id, judge="llm", max_llm_calls=2).json()
            assert result["status"] in ("attributed", "inconclusive")
            stored = client.get(f"/cases/{case_id}/attribution", params={"project": project})
            assert stored.status_code == 200 and stored.json()["judge"] == result["judge"]
