"""One optimisation per prompt at a time, across two service processes on one Neo4j: concurrent
``POST /prompts/{name}/optimize`` over real HTTP, with the scripted LLM holding the first
feedback request until the others have been answered, so that they provably overlap."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from memtrace_client import MemTraceClient, Tracer
from neo4j import Driver

from tests.prompts.test_prompts import EXTRACT_V1, attribute, optimizer, run_round
from tests.support.llm_server import Reply, ScriptedLLM, scripted_llm
from tests.support.servers import Neo4jHandle, ServiceHandle, run_service

OPTIMISER_SYSTEMS = ("You improve a prompt", "You combine feedback", "You edit a prompt")
HOLD_S = 120.0
"""How long the held request waits at most (a bound on a broken run, not a timing claim)."""


@dataclass
class Gate:
    """Holds the first feedback request of an optimisation until ``opened``."""

    opened: threading.Event = field(default_factory=threading.Event)
    entered: threading.Event = field(default_factory=threading.Event)

    def answer(self, request: dict[str, Any]) -> str | Reply:
        if str(request["messages"][0]["content"]).startswith(OPTIMISER_SYSTEMS[0]):
            self.entered.set()
            # Blocks the scripted server's loop: no other LLM request is answered meanwhile,
            # which is the point (an optimisation that should not run cannot finish first).
            self.opened.wait(HOLD_S)
        return optimizer()(request)


@dataclass
class Setup:
    llm: ScriptedLLM
    gates: list[Gate]
    services: tuple[ServiceHandle, ServiceHandle]


@pytest.fixture(scope="module")
def two_services(neo4j: Neo4jHandle, workdir: Path) -> Iterator[Setup]:
    """Two service processes on one Neo4j and one scripted LLM. Their claims' heartbeat and
    staleness are set far beyond the test, so only the test ages a claim."""
    gates = [Gate()]
    with scripted_llm(lambda request: gates[-1].answer(request)) as llm:
        env = {
            "MEMTRACE_NEO4J_USER": neo4j.user,
            "MEMTRACE_NEO4J_PASSWORD": neo4j.password,
            "MEMTRACE_LLM_BASE_URL": llm.base_url,
            "MEMTRACE_LLM_MODEL": "scripted",
            "MEMTRACE_LLM_SELF_CHECK": "false",
            "MEMTRACE_LLM_TIMEOUT_S": str(HOLD_S + 60),  # the held request is not a timeout
            "MEMTRACE_JOB_HEARTBEAT_S": "600",
            "MEMTRACE_JOB_STALE_S": "3600",
            "MEMTRACE_JOB_LEASE_S": "3600",  # a lease outlives two heartbeats (settings check)
        }
        with (
            run_service(neo4j.uri, workdir, environment=env) as a,
            run_service(neo4j.uri, workdir, environment=env) as b,
        ):
            yield Setup(llm, gates, (a, b))


def _failed_round(service: ServiceHandle, project: str, tmp_path: Path) -> None:
    """One failed case blamed on fact-extraction@1, attributed (heuristic judge)."""
    tracer = Tracer(MemTraceClient(service.url, project=project), system="toy", spool_dir=tmp_path)
    try:
        cases = run_round(tracer, ("fact-extraction", EXTRACT_V1), 1, "c")
    finally:
        tracer.close()
    with httpx.Client(base_url=service.url, timeout=60) as client:
        attribute(client, project, cases)


def _optimise(service: ServiceHandle, project: str) -> httpx.Response:
    with httpx.Client(base_url=service.url, timeout=HOLD_S + 120) as client:
        return client.post("/prompts/fact-extraction/optimize", params={"project": project})


def _optimiser_calls(llm: ScriptedLLM, since: int) -> int:
    return sum(
        str(r["messages"][0]["content"]).startswith(OPTIMISER_SYSTEMS) for r in llm.requests[since:]
    )


def test_concurrent_optimisations_of_one_prompt_run_once(
    two_services: Setup, project: str, tmp_path: Path
) -> None:
    setup = two_services
    a, b = setup.services
    gate = Gate()
    setup.gates.append(gate)
    _failed_round(a, project, tmp_path)
    before = len(setup.llm.requests)

    with ThreadPoolExecutor(5) as pool:
        posts = [pool.submit(_optimise, (a, b)[i % 2], project) for i in range(5)]
        answered: list[Future[httpx.Response]] = []
        try:  # the four that do not run are answered while the one that runs is held
            for done in as_completed(posts, timeout=HOLD_S):
                answered.append(done)
                if len(answered) == 4:
                    break
        finally:
            gate.opened.set()
        responses = [p.result() for p in posts]

    assert gate.entered.is_set()
    assert sorted(r.status_code for r in responses) == [200, 409, 409, 409, 409], [
        r.text for r in responses
    ]
    assert {f.result().status_code for f in answered} == {409}  # answered while it was held
    [ran] = [r.json() for r in responses if r.status_code == 200]
    for refused in (r.json() for r in responses if r.status_code == 409):
        assert refused["error"] == "conflict"
        assert f"is being optimised by {ran['operation_id']}" in refused["message"]
        assert refused["details"][0]["loc"] == ["path", "name"]
    # One loop's calls: 1 feedback, 1 summary, 1 edit.
    assert ran["cost"]["llm_calls"] == 3 == _optimiser_calls(setup.llm, before)
    assert ran["new_label"] == "fact-extraction@2"
    with httpx.Client(base_url=b.url, timeout=60) as client:
        detail = client.get("/prompts/fact-extraction", params={"project": project}).json()
        assert [v["label"] for v in detail["versions"]] == [
            "fact-extraction@1",
            "fact-extraction@2",
        ]
        # Released when it finished: the next one is refused for what it finds, not a claim.
        after = client.post("/prompts/fact-extraction/optimize", params={"project": project})
        assert after.status_code == 422 and "fact-extraction@2" in after.json()["message"]


def test_an_optimisation_whose_claim_went_stale_stores_nothing(
    two_services: Setup, project: str, tmp_path: Path, neo4j_driver: Driver
) -> None:
    """Its process stalled past the claim's staleness (aged here in the store), another
    optimisation took the prompt: of the two, only the one holding the claim writes
    fact-extraction@2."""
    setup = two_services
    a, b = setup.services
    gate = Gate()
    setup.gates.append(gate)
    _failed_round(a, project, tmp_path)

    claim = "MATCH (c:OptimizationClaim {project: $p}) RETURN c.operation_id AS holder"
    with ThreadPoolExecutor(2) as pool:
        first = pool.submit(_optimise, a, project)
        try:
            assert gate.entered.wait(HOLD_S)  # the first holds the claim and is asking the LLM
            [held] = neo4j_driver.execute_query(claim, p=project).records
            neo4j_driver.execute_query(
                "MATCH (c:OptimizationClaim {project: $p}) "
                "SET c.heartbeat_at = datetime() - duration('PT2H')",
                p=project,
            )
            second = pool.submit(_optimise, b, project)
            # Wait for the second to take the claim; it then waits on the held server too.
            while neo4j_driver.execute_query(claim, p=project).records[0]["holder"] in (
                held["holder"],
                None,
            ):
                assert not second.done(), second.result().text
                threading.Event().wait(0.05)
        finally:
            gate.opened.set()
        stale, taken = first.result(), second.result()

    assert taken.status_code == 200, taken.text
    assert taken.json()["new_label"] == "fact-extraction@2"
    assert stale.status_code == 409, stale.text
    assert stale.json()["message"].startswith(f"optimisation {held['holder']} not stored: ")
    # Which store came first is the scheduler's: the later finds the claim held by the other,
    # or released and the version optimised by it. Either way it names the one that wrote.
    message = stale.json()["message"]
    winner = taken.json()["operation_id"]
    assert (
        f"went stale and is held by {winner}" in message
        or f"fact-extraction@1 was optimised already (by {winner})" in message
    ), message
    with httpx.Client(base_url=a.url, timeout=60) as client:
        detail = client.get("/prompts/fact-extraction", params={"project": project}).json()
    assert [v["id"] for v in detail["versions"]][1:] == [taken.json()["new_version"]]
