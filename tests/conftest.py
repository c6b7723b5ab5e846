"""Fixtures shared by every test module, and the ``integration`` marker.

A test is ``integration`` when it needs a Neo4j or a service process: it uses one of
``INTEGRATION_FIXTURES``, directly or through another fixture (pytest's closure of fixture names
is checked, so nothing has to be marked by hand). ``pytest -m "not integration"`` (``make unit``)
runs the rest alone, in seconds.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from neo4j import Driver, GraphDatabase

from tests.support.keyed import keyed_service
from tests.support.llama_server import LlamaServer, missing, run_llama_server
from tests.support.llm_server import Answer, ScriptedLLM, oracle_from_ids, scripted_llm
from tests.support.servers import (
    Neo4jHandle,
    ServiceHandle,
    free_port,
    neo4j_for_tests,
    run_service,
)

INTEGRATION_FIXTURES = frozenset(
    {
        "neo4j",
        "neo4j_driver",
        "service",
        "down_service",
        "client",
        "llm_service",
        "llama_server",
        "embedding_server",
    }
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if INTEGRATION_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.integration)


@pytest.fixture(scope="session")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("memtrace")


@pytest.fixture(scope="session")
def neo4j(workdir: Path) -> Iterator[Neo4jHandle]:
    with neo4j_for_tests(workdir) as handle:
        yield handle


@pytest.fixture(scope="session")
def neo4j_driver(neo4j: Neo4jHandle) -> Iterator[Driver]:
    """For checks that look at the graph directly, beside the API."""
    with GraphDatabase.driver(neo4j.uri, auth=(neo4j.user, neo4j.password)) as driver:
        yield driver


@pytest.fixture(scope="session")
def service(neo4j: Neo4jHandle, workdir: Path) -> Iterator[ServiceHandle]:
    with run_service(
        neo4j.uri,
        workdir,
        MEMTRACE_NEO4J_USER=neo4j.user,
        MEMTRACE_NEO4J_PASSWORD=neo4j.password,
    ) as handle:
        yield handle


@pytest.fixture(scope="module")
def keyed(neo4j: Neo4jHandle, workdir: Path) -> Iterator[ServiceHandle]:
    """A service with API keys over three filled projects (tests/support/keyed.py)."""
    with keyed_service(neo4j, workdir) as handle:
        yield handle


@pytest.fixture(scope="session")
def down_service(workdir: Path) -> Iterator[ServiceHandle]:
    """A service whose Neo4j is not there: a port nothing listens on."""
    with run_service(f"bolt://127.0.0.1:{free_port()}", workdir) as handle:
        yield handle


@pytest.fixture
def client(service: ServiceHandle) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=service.url, timeout=60) as c:
        yield c


@pytest.fixture
def project() -> str:
    """A fresh project per test: tests never see each other's graphs."""
    return f"t-{uuid.uuid4().hex[:12]}"


@pytest.fixture(scope="session")
def llm() -> Iterator[ScriptedLLM]:
    """A scripted OpenAI-compatible server; tests set ``llm.answer`` to what it should say."""
    holder: dict[str, Answer] = {"answer": oracle_from_ids(set())}
    with scripted_llm(lambda request: holder["answer"](request)) as server:
        server.script = holder  # type: ignore[attr-defined]
        yield server


@pytest.fixture(scope="session")
def llm_service(neo4j: Neo4jHandle, workdir: Path, llm: ScriptedLLM) -> Iterator[ServiceHandle]:
    """The service with its llm judge and evidence embeddings pointed at the scripted server."""
    with run_service(
        neo4j.uri,
        workdir,
        MEMTRACE_NEO4J_USER=neo4j.user,
        MEMTRACE_NEO4J_PASSWORD=neo4j.password,
        MEMTRACE_LLM_BASE_URL=llm.base_url,
        MEMTRACE_LLM_SELF_CHECK="false",  # tests script the judge; test_judge_check tests this
        MEMTRACE_LLM_API_KEY="test-key",
        MEMTRACE_LLM_MODEL="scripted",
        MEMTRACE_LLM_TIMEOUT_S="1",
        MEMTRACE_LLM_HEURISTIC_CONFIDENCE="1.01",
        MEMTRACE_EMBEDDINGS_BASE_URL=llm.base_url,
        MEMTRACE_EMBEDDINGS_MODEL="scripted-embeddings",
    ) as handle:
        yield handle


@pytest.fixture(scope="session")
def llama_server(workdir: Path) -> Iterator[LlamaServer]:
    """A real llama.cpp server (xllamacpp) with SmolLM2-135M-Instruct, one slot, on a free port.

    Skipped when the local-llm packages are missing, except under `make test`, which installs
    them and sets MEMTRACE_TEST_LOCAL_LLM=required: there a missing model fails, so an install
    step that went missing cannot pass as a skip."""
    reason = missing()
    if reason is not None:
        if os.environ.get("MEMTRACE_TEST_LOCAL_LLM") == "required":
            pytest.fail(reason)
        pytest.skip(reason)
    with run_llama_server(workdir) as server:
        yield server
