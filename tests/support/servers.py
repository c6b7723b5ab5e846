"""Real processes the tests and the benchmarks talk to: a Neo4j and the MemTrace service over HTTP.

For the tests, Neo4j comes from, in this order: ``MEMTRACE_NEO4J_URI`` when set; a testcontainers
``Neo4jContainer`` when a Docker engine answers; else the project's own local launcher
(``service.neo4j_local``) on a free port with a throw-away data folder. A benchmark always takes a
:func:`fresh_neo4j` of its own, sized by the benchmark, and never the developer's instance.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

from service.neo4j_local import LocalNeo4j
from service.processes import NotReady, spawn, wait_ready
from service.settings import get_settings

REPO = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass(frozen=True)
class Neo4jHandle:
    uri: str
    user: str
    password: str
    local: LocalNeo4j | None = None


def _docker_answers() -> bool:
    try:
        import docker

        docker.from_env(timeout=3).ping()
        return True
    except Exception:
        return False


@contextmanager
def neo4j_for_tests(workdir: Path) -> Iterator[Neo4jHandle]:
    settings = get_settings()
    if os.environ.get("MEMTRACE_NEO4J_URI"):
        yield Neo4jHandle(
            settings.neo4j_uri, settings.neo4j_user, settings.neo4j_password.get_secret_value()
        )
        return
    if _docker_answers():
        from testcontainers.neo4j import Neo4jContainer

        with Neo4jContainer("neo4j:5.26-community", password="memtrace-test") as container:
            yield Neo4jHandle(container.get_connection_url(), "neo4j", "memtrace-test")
        return
    with local_neo4j(workdir / "neo4j", heap="1g", pagecache="512m") as handle:
        yield handle


@contextmanager
def local_neo4j(
    home: Path, heap: str, pagecache: str, start_s: float = 180
) -> Iterator[Neo4jHandle]:
    """A throw-away local Neo4j (the launcher, jars from the cache) on a free port; ``start_s``:
    how long its start may take (minutes on a machine others load)."""
    local = LocalNeo4j(
        cache_dir=get_settings().local_neo4j_dir,
        home=home,
        port=free_port(),
        heap=heap,
        pagecache=pagecache,
    )
    local.start(start_s)
    try:
        yield Neo4jHandle(local.uri, "neo4j", "unused", local)
    finally:
        local.stop()


@contextmanager
def fresh_neo4j(
    heap: str = "3g", pagecache: str = "3g", start_s: float = 180
) -> Iterator[LocalNeo4j]:
    """A benchmark's Neo4j: :func:`local_neo4j` in a folder of its own, deleted afterwards."""
    with (
        tempfile.TemporaryDirectory(prefix="memtrace-bench-") as home,
        local_neo4j(Path(home) / "neo4j", heap, pagecache, start_s) as handle,
    ):
        assert handle.local is not None
        yield handle.local


@dataclass
class ServiceHandle:
    url: str
    process: subprocess.Popen[bytes]
    log: Path

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")


def _answers(url: str) -> bool:
    try:
        return httpx.get(url, timeout=1).status_code == 200
    except httpx.HTTPError:
        return False


@contextmanager
def serving(
    argv: list[str],
    log: Path,
    ready_url: str,
    what: str,
    ready_s: float,
    env: Mapping[str, str] | None = None,
    cwd: Path = REPO,
) -> Iterator[subprocess.Popen[bytes]]:
    """``argv`` as a process logging to ``log``, yielded once ``ready_url`` answers 200 (within
    ``ready_s``; else a RuntimeError naming ``what`` with the log's tail), terminated on exit
    (killed after 15 s)."""
    process = spawn(argv, log, env=env, cwd=cwd)
    try:
        try:
            wait_ready(process, lambda: _answers(ready_url), ready_s)
        except NotReady as e:
            state = "exited early" if e.returncode is not None else "did not start"
            tail = log.read_text(errors="replace")[-3000:]
            raise RuntimeError(f"{what} {state}:\n{tail}") from e
        yield process
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=15)


@dataclass(frozen=True)
class ModelServer:
    """A local OpenAI-compatible model server run by a test (llama.cpp, the embedding model)."""

    base_url: str  # OpenAI-style: ends in /v1
    model: str
    log: Path
    process: subprocess.Popen[bytes]

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")


@contextmanager
def run_service(
    neo4j_uri: str,
    workdir: Path,
    port: int | None = None,
    checkout: Path = REPO,
    ready_s: float = 60,
    environment: Mapping[str, str] | None = None,
    **env: str,
) -> Iterator[ServiceHandle]:
    """``uvicorn service.main:app`` in a subprocess, waited on until /healthz answers (for at
    most ``ready_s``). ``checkout``: the source tree it runs (another worktree, for before/after
    benchmarks). ``environment`` and ``env``: variables for the service's process, as a mapping
    (whatever its keys) or as keywords."""
    port = port or free_port()
    log = workdir / f"service-{port}.log"
    environment = {
        **os.environ,
        "MEMTRACE_NEO4J_URI": neo4j_uri,
        "MEMTRACE_NEO4J_CONNECT_TIMEOUT_S": "2",
        "MEMTRACE_NEO4J_RETRY_TIME_S": "1",
        **(environment or {}),
        **env,
    }
    uvicorn = [sys.executable, "-m", "uvicorn", "service.main:app", "--port", str(port)]
    url = f"http://127.0.0.1:{port}"
    with serving(uvicorn, log, f"{url}/healthz", "service", ready_s, environment, checkout) as p:
        yield ServiceHandle(url, p, log)


@contextmanager
def client_of_service(
    neo4j: Neo4jHandle, workdir: Path, timeout_s: float = 30, **env: str
) -> Iterator[httpx.Client]:
    """A client of a service of its own on ``neo4j``'s store, set up with ``env``: one with other
    settings than the shared one, or a later start of a store an earlier version wrote (its
    migrations have run)."""
    with (
        run_service(
            neo4j.uri,
            workdir,
            environment={
                "MEMTRACE_NEO4J_USER": neo4j.user,
                "MEMTRACE_NEO4J_PASSWORD": neo4j.password,
                **env,
            },
        ) as service,
        httpx.Client(base_url=service.url, timeout=timeout_s) as client,
    ):
        yield client
