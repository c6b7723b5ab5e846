"""``memtrace demo``: the whole loop on one machine, for a newcomer's first run.

Starts the local Neo4j and the service in the background (they keep running for you to explore
http://127.0.0.1:8000/docs; ``memtrace stop`` ends both), ingests the example trace and prints,
for each failed case, the ancestor subgraph of its answer as a tree.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
from memtrace_client import MemTraceClientError
from rich.console import Console
from rich.tree import Tree

from cli.attribution import attribute_cases, attribution_table
from cli.batch_files import read_batches
from cli.http import ServiceRequestError, batch_client, checked, service_client
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


def start_background_service(neo4j_uri: str, console: Console) -> None:
    """Run ``memtrace serve`` detached unless a ready service already answers."""
    settings = get_settings()
    if _service_ready(settings.url):
        console.print(f"service already answers on {settings.url}")
        return
    log_path = settings.local_neo4j_dir / "service.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "MEMTRACE_NEO4J_URI": neo4j_uri}
    uvicorn = [sys.executable, "-m", "uvicorn", "service.main:app"]
    address = ["--host", settings.host, "--port", str(settings.port)]
    process = spawn([*uvicorn, *address], log_path, env=env, detach=True)
    _service_pid_file().write_text(str(process.pid))
    try:
        wait_ready(process, lambda: _service_ready(settings.url), 60, poll_s=0.3)
    except NotReady as e:
        if e.returncode is not None:
            raise RuntimeError(f"the service exited with {e.returncode}; see {log_path}") from e
        raise RuntimeError(f"the service did not become ready in 60s; see {log_path}") from e
    console.print(f"service answers on {settings.url} (pid {process.pid}, log {log_path})")


def stop_background_service(console: Console) -> None:
    pid_file = _service_pid_file()
    try:
        pid = int(pid_file.read_text())
        os.kill(pid, signal.SIGTERM)
        console.print(f"service (pid {pid}) stopped")
    except (FileNotFoundError, ValueError, ProcessLookupError):
        console.print("service not running")
    pid_file.unlink(missing_ok=True)


def subgraph_tree(subgraph: dict[str, Any]) -> Tree:
    """The ancestors of the answer drawn from the answer backwards: unit <- operation <- inputs."""
    nodes = {(n["type"], n["id"]): n for n in subgraph["nodes"]}
    produced_by: dict[str, list[str]] = {}
    consumes: dict[str, list[tuple[int, str]]] = {}
    for e in subgraph["edges"]:
        if e["type"] == "PRODUCES":
            produced_by.setdefault(e["unit"], []).append(e["operation"])
        else:
            consumes.setdefault(e["operation"], []).append((e["position"], e["unit"]))

    def unit_label(uid: str) -> str:
        n = nodes.get(("unit", uid), {})
        text = (n.get("content") or "").replace("\n", " / ")
        return f"[cyan]{n.get('kind', '?')}[/cyan] {uid}: {text[:70]}"

    def grow(branch: Tree, uid: str, seen: set[str]) -> None:
        for op_id in produced_by.get(uid, []):
            op = nodes[("operation", op_id)]
            op_branch = branch.add(f"[magenta]{op['kind']}[/magenta] {op['name']} ({op_id})")
            if op_id in seen:
                op_branch.add("[dim](shown above)[/dim]")
                continue
            seen.add(op_id)
            for _, child in sorted(consumes.get(op_id, [])):
                grow(op_branch.add(unit_label(child)), child, seen)

    root = Tree(unit_label(subgraph["answer_unit"]))
    grow(root, subgraph["answer_unit"], set())
    return root


def run_demo(trace: Path, console: Console) -> int:
    settings = get_settings()
    local = LocalNeo4j.from_settings(settings)
    try:
        with console.status("starting Neo4j (the first run fetches it from Maven Central) ..."):
            local.start()
        console.print(f"Neo4j {local.version} answers on {local.uri}")
        start_background_service(local.uri, console)
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
            console.print(attribution_table(results))
    console.print(
        f"\nExplore the API at {settings.url}/docs; stop everything with "
        "`make stop` (or `memtrace stop`)."
    )
    return 0
