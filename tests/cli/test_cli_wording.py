"""What the CLI says when it cannot do what was asked, in a CLI user's words: which project it
used and how to choose one, which setting carries the API key, what a project name may be."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from cli.projects import no_such_project
from tests.support.cli import memtrace
from tests.support.keyed import A_KEY, ADMIN_KEY, A
from tests.support.servers import ServiceHandle
from tests.support.traces import demo_batch


def one_line(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode != 0, done.stdout
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    return lines[0]


def test_a_401_says_which_setting_carries_the_key(keyed: ServiceHandle, tmp_path: Path) -> None:
    without = one_line(memtrace("projects", "--url", keyed.url, MEMTRACE_API_KEY=""))
    assert "set MEMTRACE_API_KEY" in without and "--api-key" in without
    assert "Authorization" not in without
    wrong = one_line(memtrace("projects", "--url", keyed.url, MEMTRACE_API_KEY="x" * 20))
    assert "does not accept the API key" in wrong and "MEMTRACE_API_KEY" in wrong
    # The SDK's refusal of a batch (ingest) says the same.
    trace = tmp_path / "trace.json"
    trace.write_text(json.dumps(demo_batch(A)))
    refused = one_line(memtrace("ingest", str(trace), "--url", keyed.url, MEMTRACE_API_KEY=""))
    assert "set MEMTRACE_API_KEY" in refused and "Authorization" not in refused
    given = memtrace("--api-key", A_KEY, "projects", "--url", keyed.url, MEMTRACE_API_KEY="")
    assert given.returncode == 0, given.stderr
    assert A in given.stdout


def test_a_refused_project_says_which_was_used_and_how_to_choose(keyed: ServiceHandle) -> None:
    # A key bound to A alone may not read "default": what `cases` uses with no --project.
    unnamed = one_line(memtrace("cases", "--url", keyed.url, MEMTRACE_API_KEY=A_KEY))
    assert "HTTP 403: this API key is not bound to project 'default'" in unnamed
    assert "'default' is the project commands use when no --project is given" in unnamed
    assert "--project NAME" in unnamed
    named = one_line(
        memtrace("cases", "--project", A + "x", "--url", keyed.url, MEMTRACE_API_KEY=ADMIN_KEY)
    )
    assert f"no such project '{A}x' (given with --project)" in named
    assert "memtrace projects" in named


def test_no_such_default_project_says_where_the_name_came_from() -> None:
    # On a store without a "default" project (the tests' own stores all hold one).
    said = no_such_project("default")
    assert said.startswith("no such project 'default': 'default' is the project commands use")
    assert "--project NAME" in said


def test_a_bad_project_name_is_explained_not_matched(service: ServiceHandle) -> None:
    said = one_line(memtrace("cases", "--project", "my project!", "--url", service.url))
    assert "HTTP 422" in said
    assert "a project name is 1 to 128 characters" in said and "'-'" in said
    assert "pattern" not in said and "[A-Za-z" not in said
