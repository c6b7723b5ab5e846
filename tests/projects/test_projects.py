"""GET /projects: every project a key may see, with its counts and last activity; and the CLI's
``memtrace projects`` and its "no such project" for a mistyped one."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.support.cli import memtrace
from tests.support.servers import Neo4jHandle, ServiceHandle, run_service
from tests.support.traces import demo_batch

RUN = uuid.uuid4().hex[:8]
A, B = f"pa-{RUN}", f"pb-{RUN}"
A_KEY = "proj-a-key-" + uuid.uuid4().hex
ADMIN_KEY = "proj-admin-" + uuid.uuid4().hex


def by_name(listing: list[dict]) -> dict[str, dict]:
    return {p["project"]: p for p in listing}


def test_projects_with_their_counts(client: httpx.Client, project: str) -> None:
    assert client.post("/traces", json=demo_batch(project)).status_code == 200
    listing = client.get("/projects")
    assert listing.status_code == 200, listing.text
    mine = by_name(listing.json())[project]
    # examples/demo_trace.json: 16 operations, 6 cases of which 5 failed; its last at 10:11.
    assert (mine["operations"], mine["cases"], mine["failed_cases"]) == (16, 6, 5)
    assert mine["units"] > 16
    assert mine["last_activity"].startswith("2026-05-03T10:11:00")


@pytest.fixture(scope="module")
def keyed(neo4j: Neo4jHandle, workdir: Path) -> Iterator[ServiceHandle]:
    with run_service(
        neo4j.uri,
        workdir,
        MEMTRACE_NEO4J_USER=neo4j.user,
        MEMTRACE_NEO4J_PASSWORD=neo4j.password,
        MEMTRACE_API_KEYS=f"{A_KEY}:{A};{ADMIN_KEY}",
    ) as handle:
        for project in (A, B):
            stored = httpx.post(
                f"{handle.url}/traces",
                json=demo_batch(project),
                headers={"Authorization": f"Bearer {ADMIN_KEY}"},
                timeout=60,
            )
            assert stored.status_code == 200, stored.text
        yield handle


def test_a_project_key_sees_only_its_projects(keyed: ServiceHandle) -> None:
    def names(key: str) -> set[str]:
        response = httpx.get(
            f"{keyed.url}/projects", headers={"Authorization": f"Bearer {key}"}, timeout=60
        )
        assert response.status_code == 200, response.text
        return set(by_name(response.json()))

    assert names(A_KEY) == {A}
    assert {A, B} <= names(ADMIN_KEY)
    assert httpx.get(f"{keyed.url}/projects", timeout=60).status_code == 401


def test_cli_projects_and_a_mistyped_project(service: ServiceHandle, project: str) -> None:
    assert (
        httpx.post(f"{service.url}/traces", json=demo_batch(project), timeout=60).status_code == 200
    )
    listed = memtrace("projects", "--url", service.url)
    assert listed.returncode == 0, listed.stderr
    row = next(line for line in listed.stdout.splitlines() if project in line)
    assert "16" in row and "6" in row

    as_json = memtrace("projects", "--url", service.url, "--json")
    assert by_name(json.loads(as_json.stdout))[project]["failed_cases"] == 5

    typo = project + "x"
    for args in (("cases",), ("attribute", "--all-failed"), ("attribute", "case-1")):
        done = memtrace(*args, "--project", typo, "--url", service.url)
        assert done.returncode != 0, (args, done.stdout)
        assert f"no such project {typo!r}" in done.stderr, (args, done.stderr)
        assert "memtrace projects" in done.stderr


def test_a_bad_project_name_gets_a_sentence_not_a_regex(client: httpx.Client) -> None:
    """Wherever a project is named (query, header, batch body), a bad name is answered with
    what a name may be."""
    batch = demo_batch("a b")
    sentence = (
        "a project name is 1 to 128 characters, each a letter (A-Z, a-z), a digit, '_', '.' or '-'"
    )
    for response, place in (
        (client.get("/cases", params={"project": "a b"}), "query"),
        (client.get("/cases", headers={"X-MemTrace-Project": "x" * 129}), "header"),
        (client.post("/traces", json=batch), "body"),
    ):
        assert response.status_code == 422, response.text
        details = response.json()["details"]
        named = [d for d in details if d["loc"][0] == place and "project" in d["loc"][-1].lower()]
        assert named and all(d["msg"] == sentence for d in named), details
        assert "pattern" not in response.text
