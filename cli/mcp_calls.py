"""The service calls behind ``memtrace mcp``'s tools, and the compact answers they give.

Each function takes an ``httpx.Client`` on the service that sends the caller's API key, and
returns a ``ToolAnswer``: text an agent reads and the same facts as JSON (the MCP result's
structured content). Nothing here decides what a caller may read: the service does, for the key
the client sends, and its refusal comes back as ``ServiceRequestError`` carrying its message.
"""

from __future__ import annotations

import io
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import httpx
from rich.console import Console, RenderableType

from cli.attribution import attribute_cases
from cli.audits import run_audit
from cli.cases import case_view
from cli.http import CommandError, checked
from cli.projects import list_projects

SNIPPET_CHARS = 300
"""A unit's content in an answer: enough to see what it says, not a whole document."""
PATH_NODES = 12
"""Evidence-path ids an explanation looks up (paths run a few units and operations long)."""
LOST_UNITS = 8
"""Outputs of the blamed operation an explanation shows."""
OUTPUTS_READ = 50
"""Outputs of the blamed operation read to find the carrier's next version: one request each,
and an extraction may write many facts."""
MEMORY_KEYS = ("memory_id", "entry_id")
"""The attributes a memory entry's versions share (as the attribution walk reads them)."""


@dataclass(frozen=True)
class ToolAnswer:
    text: str
    data: dict[str, Any]


def _json(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def _data_answer(data: dict[str, Any]) -> ToolAnswer:
    """Data whose text is its compact JSON (lists of rows read well that way)."""
    return ToolAnswer(_json(data), data)


def _plain(renderable: RenderableType) -> str:
    """What ``memtrace`` prints, as plain text (no colours, no terminal)."""
    out = io.StringIO()
    Console(file=out, width=240, no_color=True, color_system=None).print(
        renderable, highlight=False
    )
    return out.getvalue()


def _snippet(text: str | None) -> str | None:
    if text is None or len(text) <= SNIPPET_CHARS:
        return text
    return text[:SNIPPET_CHARS] + "..."


def _without_nones(row: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in row.items() if v is not None}


def _path(prefix: str, node_id: str, tail: str = "") -> str:
    return f"{prefix}/{quote(node_id, safe='')}{tail}"


def _require_project(client: httpx.Client, project: str) -> None:
    """A project that does not exist reads as empty over HTTP: say so rather than answer
    "nothing found" (a mistyped project would look like a project without failures)."""
    if project not in {p["project"] for p in list_projects(client)}:
        raise CommandError(
            f"no project {project!r} among those this API key may read "
            "(the list_projects tool names them)",
            usage=True,
        )


def projects(client: httpx.Client) -> ToolAnswer:
    """``GET /projects``: the projects the key may read, with their counts."""
    found = [_without_nones(p) for p in list_projects(client)]
    return _data_answer({"projects": found})


def cases(
    client: httpx.Client, project: str, filters: Mapping[str, Any], skip: int, limit: int
) -> ToolAnswer:
    """One page of ``GET /cases`` with ``filters`` (its query parameters; None: not given)."""
    params = {k: v for k, v in filters.items() if v is not None}
    page = checked(
        client.get("/cases", params={**params, "project": project, "skip": skip, "limit": limit})
    )
    if not page and skip == 0:
        _require_project(client, project)
    return _data_answer(
        {
            "project": project,
            "skip": skip,
            "cases": [_without_nones(c) for c in page],
            "next_skip": skip + limit if len(page) == limit else None,
        }
    )


def _node(client: httpx.Client, project: str, node_id: str, blamed: str | None) -> dict[str, Any]:
    """A unit or an operation of an evidence path, by id: a unit unless it is the blamed
    operation or no unit has the id."""
    params = {"project": project}
    if node_id != blamed:
        unit = client.get(_path("/units", node_id), params=params)
        if unit.status_code != 404:
            u = checked(unit)
            unit_fields = {"kind": u["kind"], "content": u["content"], "entry": _memory_key(u)}
            return {"id": node_id, "type": "unit", **unit_fields}
    op = checked(client.get(_path("/operations", node_id), params=params))
    return {"id": node_id, "type": "operation", "name": op["name"], "kind": op["kind"]}


def _memory_key(unit: Mapping[str, Any]) -> str | None:
    attributes = unit.get("attributes") or {}
    return next((str(attributes[k]) for k in MEMORY_KEYS if attributes.get(k)), None)


def _lost_in(
    client: httpx.Client, project: str, blamed: str, entry: str | None
) -> list[dict[str, Any]]:
    """What the blamed operation produced: of the memory ``entry`` the last carrier was a
    version of, the next version (or tombstone); else every output (the facts an extraction
    kept, the context a retrieval built, the answer)."""
    params = {"project": project}
    op = checked(client.get(_path("/operations", blamed), params=params))
    outputs = [
        checked(client.get(_path("/units", u), params=params))
        for u in op["produces"][:OUTPUTS_READ]
    ]
    same_entry = [u for u in outputs if entry is not None and _memory_key(u) == entry]
    return [
        {"id": u["id"], "kind": u["kind"], "content": _snippet(u["content"])}
        for u in (same_entry or outputs)[:LOST_UNITS]
    ]


def attribution(
    client: httpx.Client, project: str, case_id: str, judge: str | None, refresh: bool
) -> ToolAnswer:
    """``POST /attribute/{case_id}`` (a stored result comes back unless ``refresh`` or another
    judge is asked for), explained: the units on the evidence path that carried the information
    and what the blamed operation produced instead."""
    (result,) = attribute_cases(client, project, case_id, judge, refresh)
    op = result.get("operation")
    blamed = op["id"] if op else None
    path = [_node(client, project, n, blamed) for n in result["evidence_path"][:PATH_NODES]]
    units = [n for n in path if n["type"] == "unit"]
    carried = [{"id": n["id"], "kind": n["kind"], "content": _snippet(n["content"])} for n in units]
    entry = units[-1]["entry"] if units else None
    lost = _lost_in(client, project, blamed, entry) if blamed else []
    data = {
        "case_id": result["case_id"],
        "status": result["status"],
        "error_type": result.get("error_type"),
        "operation": op,
        "confidence": result["confidence"],
        "reason": result["reason"],
        "evidence_path": result["evidence_path"],
        "carried": carried,
        "lost_in": lost,
        "decided_by": result.get("decided_by"),
        "judge": result["judge"]["kind"],
        "llm_calls": result["judge"].get("llm_calls", 0),
    }
    return ToolAnswer(_explanation(data), data)


def _explanation(data: Mapping[str, Any]) -> str:
    op = data["operation"]
    blamed = f"{op['id']} ({op['name']}, {op['kind']})" if op else "no operation"
    lines = [
        f"case {data['case_id']}: {data['status']}, {data['error_type'] or 'no error type'}",
        f"operation: {blamed}",
        f"confidence: {data['confidence']:.2f}",
        f"reason: {data['reason']}",
        f"evidence path: {' -> '.join(data['evidence_path']) or '-'}",
    ]
    if data["carried"]:
        lines.append("carried the information:")
        lines += [f"  {u['id']} ({u['kind']}): {u['content']!r}" for u in data["carried"]]
    if data["lost_in"]:
        lines.append(f"what {op['id']} produced instead:")
        lines += [f"  {u['id']} ({u['kind']}): {u['content']!r}" for u in data["lost_in"]]
    if data["decided_by"]:
        lines.append(f"what would decide it: {data['decided_by']}")
    lines.append(f"judge: {data['judge']} ({data['llm_calls']} LLM calls)")
    return "\n".join(lines)


def lineage(client: httpx.Client, project: str, case_id: str, node_limit: int | None) -> ToolAnswer:
    """The case, its stored attribution and every unit and operation its answer depends on
    (``GET /cases/{id}/subgraph``, what the case page and ``memtrace show`` draw): the text is
    ``memtrace show``'s tree, with the units' contents; the data names the nodes and edges."""
    params: dict[str, str | int] = {"project": project}
    case = checked(client.get(_path("/cases", case_id), params=params))
    stored = client.get(_path("/cases", case_id, "/attribution"), params=params)
    subgraph = None
    if case.get("answer_unit"):
        bound = {**params, "limit": node_limit} if node_limit else params
        subgraph = checked(client.get(_path("/cases", case_id, "/subgraph"), params=bound))
    shown = {
        "case": case,
        "attribution": None if stored.status_code == 404 else checked(stored),
        "subgraph": subgraph,
    }
    data: dict[str, Any] = {"case": case, "attribution": None, "nodes": [], "edges": []}
    if shown["attribution"]:
        a = shown["attribution"]
        data["attribution"] = {k: a.get(k) for k in ("status", "error_type", "operation")}
    if subgraph is not None:
        data["nodes"] = [
            _without_nones(
                {"type": n["type"], "id": n["id"], "kind": n.get("kind"), "name": n.get("name")}
            )
            for n in subgraph["nodes"]
        ]
        data["edges"] = [[e["operation"], e["type"], e["unit"]] for e in subgraph["edges"]]
        data["truncated"] = subgraph["truncated"]
    return ToolAnswer(_plain(case_view(shown)), data)


def audits(client: httpx.Client) -> ToolAnswer:
    """``GET /audits``: each audit, what it reports, its parameters and columns."""
    listed = checked(client.get("/audits"))
    return _data_answer(
        {
            "audits": [
                {
                    "name": a["name"],
                    "description": a["description"],
                    "parameters": [
                        {k: p[k] for k in ("name", "type", "default", "description")}
                        for p in a["parameters"]
                    ],
                    "columns": [c["name"] for c in a["columns"]],
                }
                for a in listed
            ]
        }
    )


def _query_value(value: Any) -> str:
    """An audit parameter as the query string carries it (JSON's true/false for booleans)."""
    return json.dumps(value) if isinstance(value, bool) else str(value)


def audit(
    client: httpx.Client,
    project: str,
    name: str,
    params: Mapping[str, Any],
    skip: int,
    limit: int,
    cursor: str | None,
) -> ToolAnswer:
    """One page of ``GET /audits/{name}`` with the audit's own ``params``."""
    given = [(k, _query_value(v)) for k, v in params.items()]
    page = run_audit(client, name, project, given, skip, limit, cursor)
    if not page["rows"] and skip == 0 and cursor is None:
        _require_project(client, project)
    keep = ("audit", "project", "parameters", "columns", "rows", "next_skip", "next_cursor")
    return _data_answer({k: page.get(k) for k in keep})


def cypher(
    client: httpx.Client,
    project: str,
    query: str,
    parameters: Mapping[str, Any],
    limit: int | None,
) -> ToolAnswer:
    """``POST /cypher``: one read-only query pinned to ``$project`` (the service checks it)."""
    body: dict[str, Any] = {"query": query, "parameters": dict(parameters)}
    if limit is not None:
        body["limit"] = limit
    result = checked(client.post("/cypher", params={"project": project}, json=body))
    keep = ("columns", "rows", "truncated", "truncated_by", "row_limit")
    return _data_answer({k: result.get(k) for k in keep})
