"""``memtrace demo``: the whole loop on one machine, for a newcomer's first run.

Starts the local Neo4j and the service in the background (they keep running for you to explore
the API at the CLI's address, http://MEMTRACE_HOST:MEMTRACE_PORT/docs; ``memtrace stop`` ends
both), ingests the example trace and prints, for each failed case, the ancestor subgraph of its
answer as a tree. A service that already answers at that address is written into only if it is
on the Neo4j the demo started (``require_own_store``): on a shared machine it may be another
user's.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path
from urllib.parse import quote

import httpx
from memtrace_client import MemTraceClientError
from rich.console import Console

from cli.attribution import attribute_cases, attribution_table
from cli.batch_files import read_batches
from cli.cases import subgraph_tree
from cli.http import ServiceRequestError, batch_client, checked, service_client
from cli.tables import show
from service.neo4j_local import LocalNeo4j, Neo4jLaunchError
from service.processes import NotReady, spawn, wait_ready
from service.settings import get_settings


def _service_pid_file() -> Path:
    return get_settings().local_neo4j_dir / "service.pid"


def _service_ready(url: str) -> bool:
    try:
        return httpx.get(f"{url}/readyz", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


def _something_answers(url: str) -> bool:
    try:
        httpx.get(f"{url}/healthz", timeout=2)
        return True
    except httpx.HTTPError:
        return False


class ForeignService(RuntimeError):
    """A service answers where the demo would write, and it is not on the demo's Neo4j."""


def require_own_store(url: str, local: LocalNeo4j) -> None:
    """Raise ``ForeignService`` unless the service at ``url`` writes into ``local``: its
    ``/readyz`` names the id of its database, which must be the one ``local`` holds. Another
    user's service on the same machine (on the default port, say) answers like ours would."""
    try:
        ready = httpx.get(f"{url}/readyz", timeout=5)
        theirs = ready.json().get("store_id") if ready.status_code == 200 else None
    except (httpx.HTTPError, ValueError, AttributeError):
        theirs = None
    if theirs is not None and theirs == local.store_id():
        return
    why = "uses another Neo4j" if theirs else "does not say which Neo4j it uses"
    raise ForeignService(
        f"a service already answers on {url} but it {why}, not the demo's ({local.uri}): the "
        "demo will not write into it. Stop it, or run the demo on a free port with "
        "MEMTRACE_PORT (and MEMTRACE_URL unset)."
    )


def start_background_service(local: LocalNeo4j, console: Console) -> None:
    """Run ``memtrace serve`` detached on ``local`` unless a service already answers; either
    way, the service at the CLI's address must be on ``local`` (``require_own_store``)."""
    settings = get_settings()
    url = settings.service_url()
    if _something_answers(url):
        require_own_store(url, local)
        console.print(f"service already answers on {url}, on the demo's Neo4j")
        return
    log_path = settings.local_neo4j_dir / "service.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "MEMTRACE_NEO4J_URI": local.uri}
    uvicorn = [sys.executable, "-m", "uvicorn", "service.main:app"]
    address = ["--host", settings.host, "--port", str(settings.port)]
    process = spawn([*uvicorn, *address], log_path, env=env, detach=True)
    _service_pid_file().write_text(str(process.pid))
    try:
        wait_ready(process, lambda: _service_ready(url), 60, poll_s=0.3)
    except NotReady as e:
        if e.returncode is not None:
            raise RuntimeError(f"the service exited with {e.returncode}; see {log_path}") from e
        raise RuntimeError(f"the service did not become ready in 60s; see {log_path}") from e
    require_own_store(url, local)  # MEMTRACE_URL may name another address than it binds
    console.print(f"service answers on {url} (pid {process.pid}, log {log_path})")


def stop_background_service(console: Console) -> None:
    pid_file = _service_pid_file()
    try:
        pid = int(pid_file.read_text())
        os.kill(pid, signal.SIGTERM)
        console.print(f"service (pid {pid}) stopped")
    except (FileNotFoundError, ValueError, ProcessLookupError):
        console.print("service not running")
    pid_file.unlink(missing_ok=True)


def run_demo(trace: Path, console: Console) -> int:
    settings = get_settings()
    local = LocalNeo4j.from_settings(settings)
    try:
        with console.status("starting Neo4j (the first run fetches it from Maven Central) ..."):
            local.start()
        console.print(f"Neo4j {local.version} answers on {local.uri}")
        start_background_service(local, console)
    except (Neo4jLaunchError, RuntimeError) as e:
        console.print(f"[red]{e}[/red]")
        return 1

    batches = list(read_batches(trace))
    with batch_client(None) as sender, service_client(None, timeout_s=60) as client:
        for batch in batches:
            try:
                result = sender.send_json(batch)
            except MemTraceClientError as e:
                console.print(f"[red]ingestion refused: {e}[/red]")
                return 1
            console.print(
                f"ingested {trace} into project {result.project!r}: "
                f"created {result.created.model_dump()}, "
                f"already there {result.existing.model_dump()}"
            )
        for batch in batches:
            project = batch.get("project", "default")
            failed = [c for c in batch.get("cases", []) if c.get("verdict") == "failed"]
            if not failed:
                continue
            case = failed[0]
            subgraph = checked(
                client.get(
                    f"/cases/{quote(case['id'], safe='')}/subgraph", params={"project": project}
                )
            )
            console.rule(f"case {case['id']}: {case['question']}")
            console.print(f"expected: {case['expected_answer']}")
            console.print(
                f"ancestors of the answer: {len(subgraph['nodes'])} nodes, "
                f"{len(subgraph['edges'])} edges"
            )
            console.print(subgraph_tree(subgraph))
            console.rule(f"attribution of the {len(failed)} failed cases of {project!r}")
            try:
                results = attribute_cases(client, project, None, "heuristic", refresh=True)
            except ServiceRequestError as e:
                console.print(f"[red]{e}[/red]")
                return 1
            show(console, attribution_table(results))
    console.print(
        f"\nExplore the API at {settings.service_url()}/docs; stop everything with "
        "`make stop` (or `memtrace stop`)."
    )
    return 0
