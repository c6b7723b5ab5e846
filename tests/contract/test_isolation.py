"""Project isolation with API keys: every endpoint x every way of naming a project x own, other
and admin key. Whatever a request names, it acts on exactly the project it was authorised for:
it reads nothing of another project and writes nothing into one.

Each project's content carries a marker of its own (``MARK-<project>``), so a body that shows
another project's marker is a leak, and a body that lacks the marker the admin's explicit
``?project=`` answer shows acted on the wrong project.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from neo4j import Driver

from tests.support.execution_graphs import mem0_graph
from tests.support.keyed import (
    ADMIN_KEY,
    ALLOWED,
    CASE,
    DEFAULT,
    KEYS,
    PROJECTS,
    RUN,
    A,
    B,
    marker,
)
from tests.support.naming import request_naming
from tests.support.otlp_export import (
    as_otlp_json,
    as_otlp_logs_json,
    export,
    log_export,
    log_record,
    span,
)
from tests.support.servers import ServiceHandle


@dataclass(frozen=True)
class Call:
    """One endpoint: how to call it, and whether it writes."""

    method: str
    path: str
    route: str | None = None  # the OpenAPI path, when ``path`` fills in a parameter
    body: Callable[[], Any] | None = None
    query: Callable[[], dict[str, str]] | None = None
    writes: bool = False
    names_project_in_body: bool = False
    project_free: bool = False  # reads nothing of any project (the audit catalogue)
    refused_when_allowed: int | None = None  # the status an allowed request gets (a safe probe)


def _traces_body() -> dict[str, Any]:
    unit = f"iso-write-{uuid.uuid4().hex[:10]}"
    return {"units": [{"id": unit, "kind": "message", "content": "a write"}]}


def _otlp_body() -> dict[str, Any]:
    return as_otlp_json(export(span(int(uuid.uuid4().int % 10**9), 1, "iso-step", 0.0)))


def _otlp_logs_body() -> dict[str, Any]:
    event = log_record(int(uuid.uuid4().int % 10**9), 1, "gen_ai.user.message", 0.0, body="hi")
    return as_otlp_logs_json(log_export(event))


CALLS = [
    Call("GET", "/cases"),
    Call("GET", f"/cases/{CASE}", route="/cases/{case_id}"),
    Call("GET", f"/cases/{CASE}/subgraph", route="/cases/{case_id}/subgraph"),
    Call("POST", f"/attribute/{CASE}", route="/attribute/{case_id}", body=lambda: {}, writes=True),
    Call("GET", f"/cases/{CASE}/attribution", route="/cases/{case_id}/attribution"),
    Call(
        "POST",
        f"/cases/{CASE}/verdict",
        route="/cases/{case_id}/verdict",
        body=lambda: {"verdict": "failed"},
        writes=True,
    ),
    Call("GET", "/attributions"),
    Call("GET", "/projects", project_free=True),
    Call("GET", "/report"),
    Call("GET", "/report.html"),
    Call("GET", "/audits/construction_loss", route="/audits/{name}"),
    Call("GET", "/audits", project_free=True),
    Call("GET", "/prompts"),
    Call("GET", "/prompts/no-such-prompt", route="/prompts/{name}", refused_when_allowed=404),
    Call(
        "POST",
        "/prompts/no-such-prompt/optimize",
        route="/prompts/{name}/optimize",
        body=lambda: {},
        refused_when_allowed=404,
    ),
    Call("GET", "/judge/check", refused_when_allowed=404),  # no check recorded
    # The keyed service has no LLM: an allowed check is the 422 naming MEMTRACE_LLM_BASE_URL.
    Call(
        "POST", "/judge/check", body=lambda: {"record": True}, writes=True, refused_when_allowed=422
    ),
    Call("GET", "/ui/cases"),
    Call("GET", f"/ui/cases/{CASE}", route="/ui/cases/{case_id}"),
    # The console's pages are frames whose scripts read the JSON API above with the same key;
    # the frame itself must refuse a project the key is not bound to.
    Call("GET", "/ui/projects", project_free=True),
    Call("GET", "/ui/dashboard"),
    Call("GET", "/ui/prompts"),
    Call("GET", "/ui/prompts/some-prompt", route="/ui/prompts/{name}"),
    Call("GET", "/ui/audits"),
    Call("GET", "/ui/jobs"),
    # The demo's session s1 (its turns carry the project's marker) in every project.
    Call("GET", "/sessions"),
    Call("GET", "/sessions/s1", route="/sessions/{session_id}"),
    Call("GET", "/sessions/no-such-session", refused_when_allowed=404),
    Call("GET", "/ui/sessions"),
    Call("GET", "/ui/sessions/s1", route="/ui/sessions/{session_id}"),
    Call("GET", f"/units/{RUN}-msg-1", route="/units/{unit_id}"),
    Call("GET", f"/operations/{RUN}-op-answer-1", route="/operations/{operation_id}"),
    Call("GET", f"/ui/units/{RUN}-msg-1", route="/ui/units/{unit_id}"),
    Call("GET", f"/ui/operations/{RUN}-op-answer-1", route="/ui/operations/{operation_id}"),
    Call(
        "POST",
        "/cypher",
        body=lambda: {"query": "MATCH (u:Unit {project: $project}) RETURN u.content AS c"},
    ),
    Call("POST", "/traces", body=_traces_body, writes=True, names_project_in_body=True),
    Call("POST", "/otlp/v1/traces", body=_otlp_body, writes=True),
    Call("POST", "/otlp/v1/logs", body=_otlp_logs_body, writes=True),
    Call("GET", "/otlp/warnings"),
    # No project holds this trace: an allowed request is the 404 naming it, and writes nothing.
    Call(
        "POST",
        "/otlp/cases",
        body=lambda: {
            "case_id": "iso-trace-case",
            "trace_id": uuid.uuid4().hex,
            "verdict": "failed",
            "expected_answer": "x",
        },
        writes=True,
        names_project_in_body=True,
        refused_when_allowed=404,
    ),
    Call(
        "POST",
        "/import/execution-graph",
        body=mem0_graph,
        query=lambda: {"id_prefix": f"iso-{uuid.uuid4().hex[:8]}"},
        writes=True,
    ),
    # Deletions, probed so that they delete nothing the other checks rely on; what they delete
    # and keep is tests/deletion/test_deletion.py's.
    Call(
        "DELETE",
        "/sessions/no-such-session",
        route="/sessions/{session_id}",
        writes=True,
    ),
    Call("DELETE", "/data", query=lambda: {"before": "2000-01-01T00:00:00Z"}, writes=True),
    Call(
        "DELETE",
        "/project",
        query=lambda: {"confirm": "not-this-project"},
        writes=True,
        refused_when_allowed=422,
    ),
]
OPEN_PATHS = {"/healthz", "/readyz"}
JOB_PATHS = {
    "/attribution-jobs",
    "/attribution-jobs/{job_id}",
    "/attribution-jobs/{job_id}/results",
    "/attribution-jobs/{job_id}/stop",
    "/attribution-jobs/{job_id}/resume",
}
"""Covered with the same keys and namings by tests/attribution/test_attribution_job.py (a job's
id differs per project, so a fixed path in CALLS cannot name them)."""
NAMINGS = ("query", "header", "body", "cookie", "none")


def counts(driver: Driver) -> dict[str, int]:
    """Nodes of every label per project: what a write would change."""
    records = driver.execute_query(
        "MATCH (n) WHERE n.project IN $projects RETURN n.project AS p, count(n) AS n",
        projects=list(PROJECTS),
    ).records
    found = {r["p"]: r["n"] for r in records}
    return {p: found.get(p, 0) for p in PROJECTS}


def send(service: ServiceHandle, call: Call, key: str, naming: str, target: str) -> httpx.Response:
    """``call`` naming ``target`` the ``naming`` way, authenticated with ``key``."""
    body = call.body() if call.body else None
    if call.names_project_in_body and body is not None and naming == "body":
        body["project"] = target
    params = call.query() if call.query else None
    return request_naming(
        service.url, call.method, call.path, key, naming, target, params=params, body=body
    )


def admin_view(service: ServiceHandle, call: Call, target: str) -> httpx.Response:
    return send(service, call, ADMIN_KEY, "query", target)


def test_every_endpoint_is_in_the_table(keyed: ServiceHandle) -> None:
    """A new endpoint must be added to CALLS (or OPEN_PATHS), or this suite says nothing of it."""
    paths = set(httpx.get(keyed.url + "/openapi.json").json()["paths"])
    covered = {c.route or c.path for c in CALLS} | OPEN_PATHS | JOB_PATHS
    assert paths - covered == set()


def _label(call: Call) -> str:
    return f"{call.method} {call.route or call.path}"


@pytest.mark.parametrize("key_name", sorted(KEYS))
@pytest.mark.parametrize(
    ("call", "naming"),
    [(c, n) for c in CALLS for n in NAMINGS if n != "body" or c.names_project_in_body],
    ids=lambda v: _label(v) if isinstance(v, Call) else v,
)
def test_a_request_acts_on_the_authorised_project_only(
    keyed: ServiceHandle, neo4j_driver: Driver, call: Call, naming: str, key_name: str
) -> None:
    key = KEYS[key_name]
    targets = [DEFAULT] if naming == "none" else list(PROJECTS)
    for target in targets:
        before = counts(neo4j_driver)
        response = send(keyed, call, key, naming, target)
        after = counts(neo4j_driver)
        where = f"{call.method} {call.path} naming {target} by {naming} with {key_name}"
        others = [p for p in PROJECTS if p != target or call.project_free]
        for other in others:
            assert marker(other) not in response.text, f"{where} leaked {other}"
            assert after[other] == before[other], f"{where} wrote into {other}"
        named_foreign = naming != "none" and target not in ALLOWED[key]
        if call.project_free and not named_foreign:
            assert response.status_code == 200, where
            continue
        if target not in ALLOWED[key]:
            assert response.status_code == 403, f"{where}: {response.status_code} {response.text}"
            assert after == before, f"{where} wrote although refused"
            continue
        if call.refused_when_allowed is not None:
            assert response.status_code == call.refused_when_allowed, where
            continue
        assert response.status_code < 400, f"{where}: {response.status_code} {response.text}"
        if call.writes:
            continue  # a write's own effect is checked by the counts of the others above
        baseline = admin_view(keyed, call, target)
        assert response.status_code == baseline.status_code, where
        if marker(target) in baseline.text:
            assert marker(target) in response.text, f"{where} answered for another project"


@pytest.mark.parametrize("call", [c for c in CALLS if c.method == "POST"], ids=_label)
def test_query_and_header_naming_two_projects_are_refused(
    keyed: ServiceHandle, neo4j_driver: Driver, call: Call
) -> None:
    before = counts(neo4j_driver)
    with httpx.Client(base_url=keyed.url, timeout=60) as http:
        response = http.request(
            call.method,
            call.path,
            params={"project": A},
            headers={"Authorization": f"Bearer {ADMIN_KEY}", "X-MemTrace-Project": B},
            json=call.body() if call.body else None,
        )
    assert response.status_code == 422, response.text
    assert "X-MemTrace-Project" in response.json()["message"]
    assert counts(neo4j_driver) == before


def test_a_batch_naming_another_project_than_the_query_is_refused(
    keyed: ServiceHandle, neo4j_driver: Driver
) -> None:
    before = counts(neo4j_driver)
    response = httpx.post(
        keyed.url + "/traces",
        params={"project": A},
        headers={"Authorization": f"Bearer {ADMIN_KEY}"},
        json=_traces_body() | {"project": B},
    )
    assert response.status_code == 422, response.text
    assert counts(neo4j_driver) == before
