"""``memtrace mcp`` through the MCP SDK's own client, over both transports, against the keyed
service (tests/support/keyed.py: the demo trace in two keyed projects and ``default``).

stdio: the client spawns ``python -m cli.main mcp`` as a coding agent does, with project A's key
in MEMTRACE_API_KEY. HTTP: one ``memtrace mcp --transport http`` process started without a key,
and each client sends its own (``Authorization: Bearer``), which the server passes on. Either
way the service decides what a key may read, and a tool asked for another project is refused.
"""

from __future__ import annotations

import asyncio
import os
import socket
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult

from service.processes import spawn, wait_ready
from tests.support.keyed import A_KEY, ADMIN_KEY, B_KEY, RUN, A, B, marker
from tests.support.servers import REPO, ServiceHandle, free_port
from tests.support.traces import DEMO_TRUTH

TOOLS = {
    "list_projects",
    "list_cases",
    "attribute_case",
    "case_lineage",
    "list_audits",
    "run_audit",
    "run_cypher",
}
Scenario = Callable[[ClientSession], Awaitable[None]]


def _env(**extra: str) -> dict[str, str]:
    """The test's environment without a key of its own (the developer's would leak in)."""
    env = {k: v for k, v in os.environ.items() if k != "MEMTRACE_API_KEY"}
    return {**env, **extra}


def _mcp_argv(service: ServiceHandle, *extra: str) -> list[str]:
    return [sys.executable, "-m", "cli.main", "mcp", "--url", service.url, "--project", A, *extra]


def _listens(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


@pytest.fixture(scope="module")
def mcp_http(keyed: ServiceHandle, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``memtrace mcp --transport http`` on a free port, started without an API key."""
    port = free_port()
    log = Path(tmp_path_factory.mktemp("mcp")) / "mcp-http.log"
    argv = _mcp_argv(keyed, "--transport", "http", "--port", str(port))
    process = spawn(argv, log, env=_env(), cwd=REPO)
    try:
        wait_ready(process, lambda: _listens(port), 60)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(timeout=30)


@asynccontextmanager
async def _stdio_session(service: ServiceHandle, key: str) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(
        command=sys.executable,
        args=_mcp_argv(service)[1:],
        env=_env(MEMTRACE_API_KEY=key),
        cwd=REPO,
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


@asynccontextmanager
async def _http_session(url: str, key: str | None) -> AsyncIterator[ClientSession]:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=120) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


@pytest.fixture(params=["stdio", "http"])
def over(request: pytest.FixtureRequest, keyed: ServiceHandle) -> Callable[[Scenario], None]:
    """Runs a scenario on a session with project A's key, over the transport of the param."""

    def run(scenario: Scenario, key: str = A_KEY) -> None:
        async def main() -> None:
            if request.param == "stdio":
                session_of = _stdio_session(keyed, key)
            else:
                session_of = _http_session(request.getfixturevalue("mcp_http"), key)
            async with session_of as session:
                await scenario(session)

        asyncio.run(main())

    return run


def _text(result: CallToolResult) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


async def _call(session: ClientSession, tool: str, **arguments: Any) -> dict[str, Any]:
    """The tool's structured answer; the test fails on a tool error, showing its text."""
    result = await session.call_tool(tool, arguments)
    assert not result.is_error, _text(result)
    assert result.structured_content is not None
    return result.structured_content


async def _refused(session: ClientSession, tool: str, **arguments: Any) -> str:
    result = await session.call_tool(tool, arguments)
    assert result.is_error, _text(result)
    assert result.structured_content is None
    return _text(result)


def test_tools_are_listed_with_their_hints(over: Callable[[Scenario], None]) -> None:
    async def scenario(session: ClientSession) -> None:
        tools = {t.name: t for t in (await session.list_tools()).tools}
        assert set(tools) == TOOLS
        for name, tool in tools.items():
            assert tool.annotations is not None
            # attribute_case stores its result with the case: said, not hidden
            assert tool.annotations.read_only_hint is (name != "attribute_case")
        assert tools["attribute_case"].annotations.destructive_hint is False
        assert "case_id" in tools["attribute_case"].input_schema["required"]

    over(scenario)


def test_projects_and_failed_cases(over: Callable[[Scenario], None]) -> None:
    async def scenario(session: ClientSession) -> None:
        projects = await _call(session, "list_projects")
        assert [p["project"] for p in projects["projects"]] == [A]  # the key's one project

        failed = await _call(session, "list_cases")
        assert [c["id"] for c in failed["cases"]] == [f"{RUN}-{c}" for c in sorted(DEMO_TRUTH)]
        assert {c["verdict"] for c in failed["cases"]} == {"failed"}
        assert failed["next_skip"] is None

        page = await _call(session, "list_cases", limit=2, skip=2)
        assert [c["id"] for c in page["cases"]] == [f"{RUN}-case-3", f"{RUN}-case-4"]
        assert page["next_skip"] == 4

        found = await _call(session, "list_cases", q="sister")
        assert [c["id"] for c in found["cases"]] == [f"{RUN}-case-1"]
        # the keyed service attributed case-1 when it started (an ExtractionError)
        blamed = await _call(session, "list_cases", error_type="ExtractionError")
        assert [c["id"] for c in blamed["cases"]] == [f"{RUN}-case-1"]
        every = await _call(session, "list_cases", verdict=None)
        assert len(every["cases"]) == 6  # the passed case too

    over(scenario)


def test_attribution_names_the_operation_and_explains_it(
    over: Callable[[Scenario], None],
) -> None:
    async def scenario(session: ClientSession) -> None:
        for case, (error_type, operation) in DEMO_TRUTH.items():
            found = await _call(session, "attribute_case", case_id=f"{RUN}-{case}")
            assert (found["status"], found["error_type"]) == ("attributed", error_type), case
            assert found["operation"]["id"] == f"{RUN}-{operation}", case

        result = await session.call_tool("attribute_case", {"case_id": f"{RUN}-case-2"})
        update = result.structured_content
        assert update is not None
        # the job memory's first version carried the fact; the update's next version lost it
        assert update["carried"][-1]["id"] == f"{RUN}-mem-job@1"
        assert "nurse" in update["carried"][-1]["content"]
        assert [u["id"] for u in update["lost_in"]] == [f"{RUN}-mem-job@2"]
        assert update["evidence_path"][-1] == f"{RUN}-op-update-2"
        assert update["decided_by"] is None
        text = _text(result)
        assert f"operation: {RUN}-op-update-2 (memory_system.update_memory_decision" in text
        assert f"what {RUN}-op-update-2 produced instead:" in text

        deletion = await _call(session, "attribute_case", case_id=f"{RUN}-case-3")
        assert [u["kind"] for u in deletion["lost_in"]] == ["tombstone"]

    over(scenario)


def test_inconclusive_says_what_would_decide_it(
    over: Callable[..., None], keyed: ServiceHandle
) -> None:
    """A failed case whose answer no recorded operation wrote, in B (A's counts stay the
    demo's), read with B's key."""
    case, answer = f"{RUN}-orphan-case", f"{RUN}-orphan-answer"
    batch = {
        "project": B,
        "units": [{"id": answer, "kind": "answer", "content": "On Tuesday"}],
        "operations": [],
        "cases": [
            {
                "id": case,
                "question": "When is the team meeting?",
                "expected_answer": "On Monday",
                "answer_unit": answer,
                "verdict": "failed",
            }
        ],
    }
    headers = {"Authorization": f"Bearer {ADMIN_KEY}"}
    stored = httpx.post(f"{keyed.url}/traces", json=batch, headers=headers, timeout=60)
    assert stored.status_code == 200, stored.text

    async def scenario(session: ClientSession) -> None:
        result = await session.call_tool("attribute_case", {"case_id": case, "project": B})
        assert not result.is_error, _text(result)
        found = result.structured_content
        assert found is not None
        assert (found["status"], found["operation"]) == ("inconclusive", None)
        assert answer in found["decided_by"]
        assert found["lost_in"] == []
        assert f"what would decide it: {found['decided_by']}" in _text(result)

    over(scenario, key=B_KEY)


def test_lineage_is_the_answers_ancestry(over: Callable[[Scenario], None]) -> None:
    async def scenario(session: ClientSession) -> None:
        result = await session.call_tool("case_lineage", {"case_id": f"{RUN}-case-2"})
        assert not result.is_error, _text(result)
        lineage = result.structured_content
        assert lineage is not None
        assert lineage["case"]["expected_answer"] == "She is a nurse"
        edges = {tuple(e) for e in lineage["edges"]}
        assert (f"{RUN}-op-answer-2", "PRODUCES", f"{RUN}-answer-2") in edges
        assert (f"{RUN}-op-update-2", "PRODUCES", f"{RUN}-mem-job@2") in edges
        ids = {n["id"] for n in lineage["nodes"]}
        assert f"{RUN}-msg-4" in ids  # back to the source message
        text = _text(result)
        assert f"answer {RUN}-answer-2:" in text
        assert f"update memory_system.update_memory_decision ({RUN}-op-update-2)" in text

    over(scenario)


def test_audits_listed_and_run_with_parameters(over: Callable[[Scenario], None]) -> None:
    async def scenario(session: ClientSession) -> None:
        listed = await _call(session, "list_audits")
        degraded = next(a for a in listed["audits"] if a["name"] == "degraded_updates")
        assert [p["name"] for p in degraded["parameters"]] == ["min_lost_words"]

        page = await _call(session, "run_audit", name="degraded_updates")
        assert [(r["old_version"], r["new_version"], r["operation"]) for r in page["rows"]] == [
            (f"{RUN}-mem-job@1", f"{RUN}-mem-job@2", f"{RUN}-op-update-2")
        ]
        # its own parameter reaches the service: no update lost 50 words
        strict = await _call(
            session, "run_audit", name="degraded_updates", params={"min_lost_words": 50}
        )
        assert strict["rows"] == []
        assert strict["parameters"]["min_lost_words"] == 50
        unknown = await _refused(session, "run_audit", name="no_such_audit")
        assert "HTTP 404" in unknown
        assert "no_such_audit" in unknown

    over(scenario)


def test_cypher_reads_and_refuses_writes(over: Callable[[Scenario], None]) -> None:
    async def scenario(session: ClientSession) -> None:
        counted = await _call(
            session,
            "run_cypher",
            query="MATCH (o:Operation {project: $project}) "
            "RETURN o.kind AS kind, count(*) AS n ORDER BY kind",
        )
        assert counted["columns"] == ["kind", "n"]
        kinds = [["extraction", 2], ["response", 6], ["retrieval", 6], ["update", 2]]
        assert counted["rows"] == kinds
        refused = await _refused(session, "run_cypher", query="MATCH (n) DETACH DELETE n")
        assert "HTTP 400" in refused
        assert "writes" in refused
        assert "Traceback" not in refused

    over(scenario)


def test_another_projects_data_is_refused(over: Callable[[Scenario], None]) -> None:
    async def scenario(session: ClientSession) -> None:
        b_case = f"{RUN}-case-2"  # the same id exists in B: only the project differs
        for tool, arguments in (
            ("list_cases", {"project": B}),
            ("attribute_case", {"case_id": b_case, "project": B}),
            ("case_lineage", {"case_id": b_case, "project": B}),
            ("run_audit", {"name": "degraded_updates", "project": B}),
            (
                "run_cypher",
                {"query": "MATCH (u:Unit {project: $project}) RETURN u.content", "project": B},
            ),
        ):
            refused = await _refused(session, tool, **arguments)
            assert "HTTP 403" in refused, tool
            assert f"not bound to project {B!r}" in refused, tool
            assert marker(B) not in refused, tool

    over(scenario)


def test_unknown_case_is_a_tool_error(over: Callable[[Scenario], None]) -> None:
    async def scenario(session: ClientSession) -> None:
        for tool in ("attribute_case", "case_lineage"):
            refused = await _refused(session, tool, case_id="no-such-case")
            assert "HTTP 404" in refused, tool
            assert "no-such-case" in refused, tool

    over(scenario)


def test_http_passes_each_callers_key_on(mcp_http: str) -> None:
    """One HTTP server, started without a key: each caller reads with its own."""

    async def main() -> None:
        async with _http_session(mcp_http, B_KEY) as session:
            projects = await _call(session, "list_projects")
            assert [p["project"] for p in projects["projects"]] == [B]
            cases = await _call(session, "list_cases", project=B, q="sister")
            assert marker(B) in cases["cases"][0]["question"]
            refused = await _refused(session, "list_cases", project=A)
            assert f"not bound to project {A!r}" in refused
        async with _http_session(mcp_http, None) as session:
            keyless = await _refused(session, "list_projects")
            assert "HTTP 401" in keyless
            assert "MEMTRACE_API_KEY" in keyless

    asyncio.run(main())


def test_stdio_says_when_the_service_is_unreachable(tmp_path: Path) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "cli.main", "mcp", "--url", f"http://127.0.0.1:{free_port()}"],
        env=_env(),
        cwd=REPO,
    )

    async def main() -> str:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            return await _refused(session, "list_projects")

    refused = asyncio.run(main())
    assert "cannot reach the MemTrace service at http://127.0.0.1:" in refused
    assert "Traceback" not in refused
