"""``memtrace mcp``: an MCP server whose tools read a running MemTrace service for a coding agent.

A thin client: every tool is one or a few HTTP calls to the service (``cli.mcp_calls``) with an
API key, so the service's rules hold unchanged: a key reads only the projects it is bound to,
ad-hoc Cypher is checked and pinned to its project there, audits run within their budgets.
The key is the one the caller's MCP request carries (``Authorization: Bearer KEY``, over HTTP),
else the server's own (``--api-key`` / ``MEMTRACE_API_KEY``).

Every tool reads, but ``attribute_case``: ``POST /attribute/{case_id}`` stores its result with
the case. It is allowed because that result is derived, never trace data: nothing a trace sent
is changed, a stored result is returned as it is unless ``refresh`` (or another judge) is asked
for, and the console and ``memtrace attribute`` store the same. The tool says so in its hints
(not read-only, not destructive, idempotent).

A refusal or a bad argument (a 4xx from the service), an unreachable service: the tool answers
an MCP tool error carrying the service's message, never a traceback.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Annotated, Any, Literal

import httpx
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from cli import mcp_calls
from cli.http import CommandError
from cli.mcp_calls import ToolAnswer

INSTRUCTIONS = (
    "MemTrace records an LLM memory system's operations as a graph and attributes a failed "
    "answer to the operation that lost the information (ExtractionError, UpdateError, "
    "DeletionError, RetrievalError, ResponseError). Start with list_projects, then "
    "list_cases (verdict 'failed'), then attribute_case or case_lineage on a case id."
)
READS = ToolAnnotations(read_only_hint=True, open_world_hint=False)
STORES_RESULT = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)
TIMEOUT_S = 300
"""As the CLI's: an attribution with an LLM judge takes minutes on a small local model."""

Judge = Literal["heuristic", "llm", "llm-all"]
Verdict = Literal["failed", "passed", "unknown"]
ErrorType = Literal[
    "ExtractionError", "UpdateError", "DeletionError", "RetrievalError", "ResponseError"
]
ProjectArg = Annotated[
    str | None,
    Field(description="The project (list_projects names them); default: the server's."),
]
CaseArg = Annotated[str, Field(description="The case's id (list_cases gives them).")]
Limit = Annotated[int, Field(ge=1, le=1000, description="At most this many rows.")]
Skip = Annotated[int, Field(ge=0, description="Rows to skip: the previous page's next_skip.")]


def _bearer(headers: Mapping[str, str] | None) -> str | None:
    """The key an MCP request over HTTP carries; None on stdio or without one."""
    for name, value in (headers or {}).items():
        scheme, _, key = value.partition(" ")
        if name.lower() == "authorization" and scheme.lower() == "bearer" and key.strip():
            return key.strip()
    return None


def _result(answer: ToolAnswer) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=answer.text)], structured_content=answer.data
    )


class Tools:
    """The tools, bound to the service (``url``), a default project and the server's key."""

    def __init__(self, url: str, project: str, api_key: str | None) -> None:
        self.url = url
        self.project = project
        self.api_key = api_key

    @contextmanager
    def client(self, ctx: Context) -> Iterator[httpx.Client]:
        """A client sending the caller's key (else the server's); every failure it meets
        becomes a ``ToolError`` with the service's own words."""
        key = _bearer(ctx.headers) or self.api_key
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        try:
            with httpx.Client(base_url=self.url, headers=headers, timeout=TIMEOUT_S) as client:
                yield client
        except CommandError as e:  # the service's 4xx/5xx answer, or "no such project"
            raise ToolError(str(e)) from None
        except httpx.HTTPError as e:
            reason = " ".join(str(e).split()) or type(e).__name__
            raise ToolError(f"cannot reach the MemTrace service at {self.url} ({reason})") from None

    def answer(self, ctx: Context, call: Callable[[httpx.Client], ToolAnswer]) -> CallToolResult:
        with self.client(ctx) as client:
            return _result(call(client))

    def register(self, server: MCPServer[Any]) -> None:
        """Add every tool to ``server``."""
        for tool, hints in (
            (self.list_projects, READS),
            (self.list_cases, READS),
            (self.attribute_case, STORES_RESULT),
            (self.case_lineage, READS),
            (self.list_audits, READS),
            (self.run_audit, READS),
            (self.run_cypher, READS),
        ):
            server.add_tool(tool, annotations=hints, structured_output=False)

    def list_projects(self, ctx: Context) -> CallToolResult:
        """The projects this API key may read, with their counts of operations, units, cases
        and failed cases and their last activity."""
        return self.answer(ctx, mcp_calls.projects)

    def list_cases(
        self,
        ctx: Context,
        project: ProjectArg = None,
        verdict: Annotated[
            Verdict | None, Field(description="failed (the default), passed or unknown; null: all")
        ] = "failed",
        error_type: Annotated[
            ErrorType | None, Field(description="Only cases whose stored attribution blames it.")
        ] = None,
        attributed: Annotated[
            bool | None, Field(description="Only cases with (true) or without (false) one.")
        ] = None,
        q: Annotated[
            str | None, Field(description="Only questions or given answers containing this.")
        ] = None,
        system: Annotated[str | None, Field(description="Only cases of this system.")] = None,
        session_id: Annotated[str | None, Field(description="Only this session's.")] = None,
        since: Annotated[str | None, Field(description="Answered at/after (ISO, UTC).")] = None,
        until: Annotated[str | None, Field(description="Answered before (ISO, UTC).")] = None,
        newest_first: bool = False,
        skip: Skip = 0,
        limit: Limit = 50,
    ) -> CallToolResult:
        """A page of the project's cases (by default the failed ones): question, expected and
        given answer, when and by which system, and the stored attribution's status and error
        type. Page with next_skip."""
        filters = {
            "verdict": verdict,
            "error_type": error_type,
            "attributed": None if attributed is None else str(attributed).lower(),
            "q": q,
            "system": system,
            "session_id": session_id,
            "since": since,
            "until": until,
            "sort": "newest" if newest_first else None,
        }
        where = project or self.project
        return self.answer(ctx, lambda c: mcp_calls.cases(c, where, filters, skip, limit))

    def attribute_case(
        self,
        ctx: Context,
        case_id: CaseArg,
        project: ProjectArg = None,
        judge: Annotated[
            Judge | None,
            Field(
                description="heuristic (no LLM), llm or llm-all; null: a stored result "
                "whatever its judge, else the service's default"
            ),
        ] = None,
        refresh: Annotated[
            bool, Field(description="Attribute again, replacing the stored result.")
        ] = False,
    ) -> CallToolResult:
        """Attribute a failed case and explain it: the operation that lost the information,
        the error type, the reason, the confidence and status, the evidence path with the
        units that carried the information and what the blamed operation produced instead,
        and, when inconclusive, what would decide it. The result is stored with the case (as
        the console's and `memtrace attribute`'s are) and returned again on the next call."""
        where = project or self.project
        return self.answer(ctx, lambda c: mcp_calls.attribution(c, where, case_id, judge, refresh))

    def case_lineage(
        self,
        ctx: Context,
        case_id: CaseArg,
        project: ProjectArg = None,
        node_limit: Annotated[
            int | None, Field(ge=1, description="Most nodes (capped by the service).")
        ] = None,
    ) -> CallToolResult:
        """The case (question, expected answer, evidence), its stored attribution and the
        tree of every operation and unit its answer depends on, from the answer back to the
        source messages."""
        where = project or self.project
        return self.answer(ctx, lambda c: mcp_calls.lineage(c, where, case_id, node_limit))

    def list_audits(self, ctx: Context) -> CallToolResult:
        """Every audit (facts never extracted, degraded updates, evidence never retrieved,
        ...) with what it reports, its parameters (type, default) and its columns."""
        return self.answer(ctx, mcp_calls.audits)

    def run_audit(
        self,
        ctx: Context,
        name: Annotated[str, Field(description="The audit (list_audits names them).")],
        project: ProjectArg = None,
        params: Annotated[
            dict[str, str | int | float | bool] | None,
            Field(description="The audit's own parameters (list_audits lists them)."),
        ] = None,
        skip: Skip = 0,
        limit: Limit = 50,
        cursor: Annotated[
            str | None, Field(description="The previous page's next_cursor, where given.")
        ] = None,
    ) -> CallToolResult:
        """One page of an audit's rows for the project; page with next_skip or next_cursor."""
        where = project or self.project
        return self.answer(
            ctx, lambda c: mcp_calls.audit(c, where, name, params or {}, skip, limit, cursor)
        )

    def run_cypher(
        self,
        ctx: Context,
        query: Annotated[
            str,
            Field(
                description="One read-only Cypher query starting from nodes pinned to "
                "$project, e.g. MATCH (o:Operation {project: $project}) RETURN o.kind, count(*)"
            ),
        ],
        project: ProjectArg = None,
        parameters: Annotated[
            dict[str, Any] | None, Field(description="Query parameters ($project is set).")
        ] = None,
        limit: Annotated[int | None, Field(ge=1, description="Most rows (capped).")] = None,
    ) -> CallToolResult:
        """Run one read-only Cypher query over the project's graph ((:Operation)-[:CONSUMES]->
        (:Unit), (:Operation)-[:PRODUCES]->(:Unit), (:Case)); the service refuses writes and
        queries not pinned to $project, and bounds time, rows and bytes."""
        where = project or self.project
        return self.answer(
            ctx, lambda c: mcp_calls.cypher(c, where, query, parameters or {}, limit)
        )


def build_server(url: str, project: str, api_key: str | None) -> MCPServer[Any]:
    """The MCP server with every tool, reading the service at ``url``."""
    server: MCPServer[Any] = MCPServer("memtrace", instructions=INSTRUCTIONS, log_level="WARNING")
    Tools(url, project, api_key).register(server)
    return server
