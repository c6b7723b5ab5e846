"""The memtrace command line, run as a user runs it: a subprocess."""

from __future__ import annotations

import json
import subprocess
from importlib.metadata import version
from pathlib import Path

import httpx
import pytest
from memtrace_client import MemTraceClient

from tests.support.cli import memtrace
from tests.support.servers import Neo4jHandle, ServiceHandle, free_port
from tests.support.traces import chain_batch, demo_batch


def test_ingest_jsonl_with_summary(service: ServiceHandle, project: str, tmp_path: Path) -> None:
    path = tmp_path / "batches.jsonl"
    batches = [chain_batch(project, 30, prefix=f"b{i}-") for i in range(3)]
    path.write_text("\n".join(json.dumps(b) for b in batches) + "\n")
    done = memtrace("ingest", str(path), "--url", service.url)
    assert done.returncode == 0, done.stderr
    assert "3 batch(es)" in done.stdout
    assert "'operations': 90" in done.stdout
    again = memtrace("ingest", str(path), "--url", service.url)
    assert "already there {'units': 93, 'operations': 90" in again.stdout


def test_ingest_json_list_and_project_override(
    service: ServiceHandle, project: str, tmp_path: Path
) -> None:
    path = tmp_path / "demo.json"
    path.write_text(json.dumps([demo_batch("ignored")], indent=2))
    done = memtrace("ingest", str(path), "--url", service.url, "--project", project)
    assert done.returncode == 0, done.stderr
    case = httpx.get(f"{service.url}/cases/case-1", params={"project": project})
    assert case.status_code == 200


def test_ingest_reports_bad_lines_and_refusals(
    service: ServiceHandle, project: str, tmp_path: Path
) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(chain_batch(project, 2)) + "\n{not json\n")
    done = memtrace("ingest", str(bad), "--url", service.url)
    assert done.returncode == 2
    assert "bad.jsonl:2" in done.stderr

    refused = tmp_path / "refused.json"
    batch = chain_batch(project, 2)
    batch["operations"][0]["kind"] = "teleport"
    refused.write_text(json.dumps(batch))
    done = memtrace("ingest", str(refused), "--url", service.url)
    assert done.returncode == 1
    assert "HTTP 422" in done.stderr
    assert "operations" in done.stderr


def test_a_batch_naming_no_project_is_stored_in_default_with_a_warning(
    service: ServiceHandle, project: str, tmp_path: Path
) -> None:
    # ``project`` only makes the ids unique: these batches name no project.
    unnamed = [chain_batch("-", 2, prefix=f"{project}-{i}-") for i in range(3)]
    for batch in unnamed:
        del batch["project"]
    path = tmp_path / "unnamed.jsonl"
    path.write_text("\n".join(json.dumps(b) for b in unnamed) + "\n")
    done = memtrace("ingest", str(path), "--url", service.url)
    assert done.returncode == 0, done.stderr
    assert "3 batch(es)" in done.stdout
    warned = [line for line in done.stderr.splitlines() if "names no project" in line]
    assert len(warned) == 1, done.stderr  # once, not once per batch
    assert "'default'" in warned[0]

    answer = httpx.post(f"{service.url}/traces", json=unnamed[0], timeout=60).json()
    assert answer["project"] == "default" and len(answer["warnings"]) == 1
    named = httpx.post(
        f"{service.url}/traces", json=unnamed[0], params={"project": project}, timeout=60
    ).json()
    assert (named["project"], named["warnings"]) == (project, [])
    # The SDK always names its project, so it never meets the warning.
    with MemTraceClient(service.url, project=project) as client:
        sent = client.send({"units": unnamed[1]["units"]})
    assert (sent.project, sent.warnings) == (project, [])


def test_neo4j_status_of_the_test_instance(neo4j: Neo4jHandle) -> None:
    if neo4j.local is None:
        pytest.skip("the tests' Neo4j does not come from the local launcher")
    env = {
        "MEMTRACE_LOCAL_NEO4J_DIR": str(neo4j.local.cache_dir),
        "MEMTRACE_LOCAL_NEO4J_HOME": str(neo4j.local.home),
        "MEMTRACE_LOCAL_NEO4J_PORT": str(neo4j.local.port),
    }
    done = memtrace("neo4j", "status", **env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"pid: {neo4j.local.pid()}" in done.stdout
    assert "answers" in done.stdout
    # Starting again finds the running instance instead of launching a second one.
    again = memtrace("neo4j", "start", **env)
    assert again.returncode == 0
    assert f"pid {neo4j.local.pid()}" in again.stdout


def test_neo4j_status_when_nothing_runs(tmp_path: Path) -> None:
    done = memtrace(
        "neo4j",
        "status",
        MEMTRACE_LOCAL_NEO4J_HOME=str(tmp_path),
        MEMTRACE_LOCAL_NEO4J_PORT="1",
    )
    assert done.returncode == 1
    assert "no answer" in done.stdout


def test_attribute_one_case_and_all_failed(service: ServiceHandle, project: str) -> None:
    assert httpx.post(f"{service.url}/traces", json=demo_batch(project)).status_code == 200
    one = memtrace("attribute", "case-4", "--project", project, "--url", service.url, "--json")
    assert one.returncode == 0, one.stderr
    [result] = json.loads(one.stdout)
    assert (result["error_type"], result["operation"]["id"]) == ("RetrievalError", "op-search-4")

    every = memtrace("attribute", "--all-failed", "--project", project, "--url", service.url)
    assert every.returncode == 0, every.stderr
    for case_id, error_type in [("case-1", "ExtractionError"), ("case-3", "DeletionError")]:
        row = next(line for line in every.stdout.splitlines() if f" {case_id} " in line)
        assert error_type in row

    missing = memtrace("attribute", "nope", "--project", project, "--url", service.url)
    assert missing.returncode == 1
    assert "HTTP 404" in missing.stderr
    neither = memtrace("attribute", "--url", service.url)
    assert neither.returncode == 2


def assert_one_line_failure(done: subprocess.CompletedProcess[str], *words: str) -> None:
    """A failed command says what went wrong in one line on stderr, without a traceback."""
    assert done.returncode != 0
    assert "Traceback" not in done.stdout + done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, done.stderr
    for word in words:
        assert word in lines[0], lines[0]


def test_commands_fail_in_one_line_when_the_service_is_down() -> None:
    down = f"http://127.0.0.1:{free_port()}"
    assert_one_line_failure(memtrace("attribute", "X", "--url", down), "cannot reach", down)
    assert_one_line_failure(memtrace("report", "--url", down), "cannot reach", down)
    assert_one_line_failure(memtrace("audit", "--url", down), "cannot reach", down)


def test_report_prompts_and_audit_say_no_such_project(service: ServiceHandle, project: str) -> None:
    assert (
        httpx.post(f"{service.url}/traces", json=chain_batch(project, 2), timeout=60).status_code
        == 200
    )
    mistyped = f"{project}x"
    # audit's usage errors (an unknown audit, a bad parameter, no such project) exit 2.
    for command, usage_exit in (
        (["report"], 1),
        (["prompts"], 1),
        (["audit", "construction_loss"], 2),
    ):
        done = memtrace(*command, "--project", mistyped, "--url", service.url)
        assert_one_line_failure(done, "no such project", mistyped)
        assert done.returncode == usage_exit
        # A project that exists but has nothing of the kind still answers, empty.
        empty = memtrace(*command, "--project", project, "--url", service.url)
        assert empty.returncode == 0, empty.stderr


def test_report_into_a_missing_folder_fails_in_one_line() -> None:
    # The folder is checked before the service is asked, so no service is needed here.
    done = memtrace("report", "--html", "/no/such/dir/r.html", "--url", "http://127.0.0.1:1")
    assert_one_line_failure(done, "/no/such/dir")


def test_version() -> None:
    done = memtrace("--version")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"memtrace {version('memtrace-server')}"
