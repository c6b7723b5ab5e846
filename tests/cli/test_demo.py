"""`memtrace demo` writes only into a service on the Neo4j it started: another user's service
answering at the demo's address (same machine, default port) is refused, never filled."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from service.neo4j_local import LocalNeo4j
from service.settings import get_settings
from tests.support.cli import memtrace
from tests.support.servers import Neo4jHandle, ServiceHandle, free_port
from tests.support.traces import demo_batch


def _projects(service: ServiceHandle) -> set[str]:
    listed = httpx.get(f"{service.url}/projects", timeout=60)
    assert listed.status_code == 200, listed.text
    return {p["project"] for p in listed.json()}


def _trace(tmp_path: Path, project: str) -> Path:
    path = tmp_path / "trace.json"
    path.write_text(json.dumps(demo_batch(project)))
    return path


def _demo(trace: Path, home: Path, bolt_port: int, **env: str) -> subprocess.CompletedProcess[str]:
    """``memtrace demo`` with its own Neo4j in ``home`` on ``bolt_port``."""
    return memtrace(
        "demo",
        "--trace",
        str(trace),
        MEMTRACE_LOCAL_NEO4J_HOME=str(home),
        MEMTRACE_LOCAL_NEO4J_PORT=str(bolt_port),
        **env,
    )


def _at(service: ServiceHandle) -> dict[str, str]:
    """The CLI's address set to ``service``'s by MEMTRACE_PORT (MEMTRACE_URL unset)."""
    return {"MEMTRACE_URL": "", "MEMTRACE_PORT": str(urlsplit(service.url).port)}


def test_the_demo_refuses_a_service_on_another_neo4j(
    service: ServiceHandle, project: str, tmp_path: Path
) -> None:
    # The demo starts its own (small) Neo4j; the session's service answers on MEMTRACE_PORT
    # but writes into the session's Neo4j: someone else's service, as far as the demo knows.
    own = LocalNeo4j(
        cache_dir=get_settings().local_neo4j_dir,
        home=tmp_path / "demo-neo4j",
        port=free_port(),
        heap="512m",
        pagecache="128m",
    )
    trace = _trace(tmp_path, project)
    memory = {
        "MEMTRACE_LOCAL_NEO4J_HEAP": own.heap,
        "MEMTRACE_LOCAL_NEO4J_PAGECACHE": own.pagecache,
    }
    # The service found by MEMTRACE_URL, then by MEMTRACE_PORT (the Neo4j is started once).
    addresses = ({"MEMTRACE_URL": service.url}, _at(service))
    try:
        runs = [_demo(trace, own.home, own.port, **memory, **address) for address in addresses]
    finally:
        own.stop()
    for done in runs:
        said = " ".join((done.stdout + done.stderr).split())
        assert done.returncode == 1, said
        assert f"a service already answers on {service.url} but it uses another Neo4j" in said
        assert "will not write into it" in said and "MEMTRACE_PORT" in said
    assert project not in _projects(service)


def test_the_demo_uses_a_service_already_on_its_own_neo4j(
    service: ServiceHandle, neo4j: Neo4jHandle, project: str, tmp_path: Path
) -> None:
    if neo4j.local is None:
        pytest.skip("the session's Neo4j is not one the local launcher started")
    done = _demo(_trace(tmp_path, project), neo4j.local.home, neo4j.local.port, **_at(service))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "on the demo's Neo4j" in done.stdout
    assert project in _projects(service)
