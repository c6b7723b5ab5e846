"""``memtrace cases`` and ``memtrace show CASE``, the case list's system/since filters, and every
table command read at 80 columns when piped."""

from __future__ import annotations

import json
import subprocess

import httpx

from tests.support.cli import memtrace
from tests.support.servers import ServiceHandle
from tests.support.traces import demo_batch


def ids(cases: list[dict]) -> list[str]:
    return [c["id"] for c in cases]


def test_the_case_list_filters_by_system_and_time(client: httpx.Client, project: str) -> None:
    assert client.post("/traces", json=demo_batch(project)).status_code == 200

    def listed(**params: str) -> list[str]:
        response = client.get("/cases", params={"project": project, **params})
        assert response.status_code == 200, response.text
        return ids(response.json())

    # The demo's answers come at 10:01, 10:03, ... 10:11 on 2026-05-03, all from mem0-classic.
    assert listed(since="2026-05-03T10:05:00Z") == ["case-3", "case-4", "case-5", "case-6"]
    assert listed(since="2026-05-03T12:05:00+02:00", verdict="failed") == [
        "case-3",
        "case-4",
        "case-5",
    ]
    assert listed(since="2026-05-03T10:05:00") == listed(since="2026-05-03T10:05:00Z")  # UTC
    assert len(listed(system="mem0-classic")) == 6
    assert listed(system="letta") == []
    bad = client.get("/cases", params={"project": project, "since": "yesterday"})
    assert bad.status_code == 422 and bad.json()["details"][0]["loc"] == ["query", "since"]


def test_cli_cases(service: ServiceHandle, project: str) -> None:
    assert (
        httpx.post(f"{service.url}/traces", json=demo_batch(project), timeout=60).status_code == 200
    )
    url = ("--project", project, "--url", service.url)
    table = memtrace("cases", *url)
    assert table.returncode == 0, table.stderr
    for n in range(1, 7):
        assert f"case-{n}" in table.stdout
    assert "What is the name of Alice's dog?" in " ".join(table.stdout.split())
    assert "mem0-classic" in table.stdout and "2026-05-03" in table.stdout

    def listed(*args: str) -> list[str]:
        done = memtrace("cases", *url, "--json", *args)
        assert done.returncode == 0, done.stderr
        return ids(json.loads(done.stdout))

    assert listed("--verdict", "failed", "--since", "2026-05-03T10:05:00Z") == [
        "case-3",
        "case-4",
        "case-5",
    ]
    assert listed("--q", "dog") == ["case-3"]
    assert listed("--system", "letta") == []
    nothing = memtrace("cases", *url, "--system", "letta")
    assert nothing.returncode == 0
    assert "no cases" in nothing.stdout
    bad = memtrace("cases", *url, "--verdict", "maybe")
    assert bad.returncode != 0 and "verdict" in bad.stderr


def test_cli_show_a_case(service: ServiceHandle, project: str) -> None:
    assert (
        httpx.post(f"{service.url}/traces", json=demo_batch(project), timeout=60).status_code == 200
    )
    url = ("--project", project, "--url", service.url)
    before = memtrace("show", "case-3", *url)
    assert before.returncode == 0, before.stderr
    text = before.stdout
    assert "What is the name of Alice's dog?" in text and "Biscuit" in text
    assert "not attributed yet" in text
    # The dependency tree of the answer, as the demo draws it.
    for node in ("answer-3", "op-answer-3", "op-search-3", "question-answering"):
        assert node in text, node

    assert memtrace("attribute", "case-3", *url).returncode == 0
    after = memtrace("show", "case-3", *url)
    assert "DeletionError" in after.stdout
    assert "memory_system.update_memory_decision" in after.stdout

    as_json = memtrace("show", "case-3", *url, "--json")
    shown = json.loads(as_json.stdout)
    assert shown["case"]["id"] == "case-3"
    assert shown["attribution"]["error_type"] == "DeletionError"
    assert shown["subgraph"]["answer_unit"] == "answer-3"

    missing = memtrace("show", "nope", *url)
    assert missing.returncode == 1 and "HTTP 404" in missing.stderr


def test_cli_show_a_case_whose_units_are_not_defined_yet(
    service: ServiceHandle, project: str
) -> None:
    # The answer, and what its operation read, are named by id only: sent later, or never.
    batch = {
        "project": project,
        "operations": [
            {
                "id": "op-answer",
                "name": "answer_question",
                "kind": "response",
                "ts": "2026-05-03T10:00:00Z",
                "inputs": ["ctx-later"],
                "outputs": ["answer-later"],
            }
        ],
        "cases": [
            {
                "id": "case-early",
                "question": "Where does Alice live?",
                "expected_answer": "Lisbon",
                "answer_unit": "answer-later",
                "verdict": "failed",
            },
            {
                "id": "case-orphan",
                "question": "Who is Bob?",
                "expected_answer": "A friend",
                "answer_unit": "never-sent",
                "verdict": "failed",
            },
        ],
    }
    assert httpx.post(f"{service.url}/traces", json=batch, timeout=60).status_code == 200
    url = ("--project", project, "--url", service.url)
    early = memtrace("show", "case-early", *url)
    assert early.returncode == 0, early.stderr
    assert "Traceback" not in early.stdout + early.stderr
    lines = early.stdout.splitlines()
    for uid in ("answer-later", "ctx-later"):
        [line] = [line for line in lines if f"{uid}:" in line]
        assert "(not defined yet)" in line, line
    assert "answer_question (op-answer)" in early.stdout

    orphan = memtrace("show", "case-orphan", *url)
    assert orphan.returncode == 0, orphan.stderr
    [root] = [line for line in orphan.stdout.splitlines() if "never-sent:" in line]
    assert "(not defined yet)" in root


def narrow(*args: str) -> subprocess.CompletedProcess[str]:
    """The command piped (stdout is not a terminal) in an 80-column window."""
    done = memtrace(*args, COLUMNS="80")
    assert done.returncode == 0, done.stderr
    too_long = [line for line in done.stdout.splitlines() if len(line) > 80]
    assert not too_long, (args, too_long)
    return done


def test_every_table_reads_at_80_columns(service: ServiceHandle, project: str) -> None:
    assert (
        httpx.post(f"{service.url}/traces", json=demo_batch(project), timeout=60).status_code == 200
    )
    url = ("--project", project, "--url", service.url)
    attributed = narrow("attribute", "--all-failed", *url).stdout
    words = attributed.split()
    for whole in ("case-1", "case-3", "op-update-2", "memory_system.update_memory_decision"):
        assert whole in words, whole  # ids and names whole, not cut to a word per line
    assert "DeletionError" in words and "ExtractionError" in words
    listed = json.loads(memtrace("jobs", *url, "--json").stdout)
    assert listed[0]["id"] in narrow("jobs", *url).stdout.split()
    one = narrow("attribute", "case-4", *url).stdout.split()
    assert "op-search-4" in one and "memory_system.search_vector_store" in one

    cases = narrow("cases", *url).stdout.split()
    assert {f"case-{n}" for n in range(1, 7)} <= set(cases)
    assert "op-answer-3" in narrow("show", "case-3", *url).stdout
    report = narrow("report", *url).stdout.split()
    assert "DeletionError" in report and "memory_system.update_memory_decision" in report
    assert "construction_loss" in narrow("audit", "--url", service.url).stdout.split()
    audit = narrow("audit", "retrieval_misses", "-p", "min_answer_coverage=0", *url).stdout
    assert "retrieval_misses" in audit
    assert project in narrow("projects", "--url", service.url).stdout.split()
