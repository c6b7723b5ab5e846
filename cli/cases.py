"""``memtrace cases`` and ``memtrace show CASE``: find a case and see what its answer depends on.

``subgraph_tree`` draws the ancestors of an answer as a tree (``memtrace demo`` uses it too).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import httpx
from rich.console import Console, Group, RenderableType
from rich.table import Table
from rich.text import Text
from rich.tree import Tree

from cli.http import ServiceRequestError, checked
from cli.projects import require_project

PAGE = 1000
UNDEFINED = "(not defined yet)"
"""How ``show`` names a unit some record refers to by id but that was never sent."""


def list_cases(
    client: httpx.Client, project: str, filters: dict[str, str | None], limit: int
) -> list[dict[str, Any]]:
    """Up to ``limit`` cases of the project matching ``filters`` (verdict, q, system, since:
    those of ``GET /cases``), in id order. None found: the project is checked, so a mistyped
    one says so instead of printing nothing."""
    params = {"project": project, **{k: v for k, v in filters.items() if v is not None}}
    cases: list[dict[str, Any]] = []
    while len(cases) < limit:
        size = min(PAGE, limit - len(cases))
        page = checked(client.get("/cases", params={**params, "skip": len(cases), "limit": size}))
        cases += page
        if len(page) < size:
            break
    if not cases:
        require_project(client, project)
    return cases


def _when(value: str | None) -> str:
    return value[:19].replace("T", " ") if value else "-"


def cases_table(cases: list[dict[str, Any]], project: str) -> Table:
    table = Table(
        "case",
        "verdict",
        "answered",
        "system",
        "session",
        "attribution",
        "question",
        title=f"{len(cases)} case(s) of {project!r}",
    )
    for c in cases:
        attribution = c.get("error_type") or c.get("attribution_status") or "-"
        table.add_row(
            c["id"],
            c["verdict"],
            _when(c.get("answered_at")),
            c.get("system") or "-",
            c.get("session_id") or "-",
            attribution,
            " ".join((c.get("question") or "").split()),
        )
    return table


def _path(case_id: str, tail: str = "") -> str:
    return f"/cases/{quote(case_id, safe='')}{tail}"


def fetch_case(client: httpx.Client, project: str, case_id: str) -> dict[str, Any]:
    """The case, its stored attribution (None if it has none) and its answer's ancestor
    subgraph (None if the case names no answer unit)."""
    params = {"project": project}
    try:
        case = checked(client.get(_path(case_id), params=params))
    except ServiceRequestError as e:
        if e.usage:  # a 404: say so when it is the project that does not exist
            require_project(client, project)
        raise
    attribution = client.get(_path(case_id, "/attribution"), params=params)
    subgraph = None
    if case.get("answer_unit"):
        subgraph = checked(client.get(_path(case_id, "/subgraph"), params=params))
    return {
        "case": case,
        "attribution": None if attribution.status_code == 404 else checked(attribution),
        "subgraph": subgraph,
    }


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

    def unit_label(uid: str) -> Text:
        n = nodes.get(("unit", uid), {})
        if not n.get("defined", True) or n.get("kind") is None:
            # Named by id (a case's answer, an operation's input) but never sent yet: it has
            # neither kind nor content, and may be sent later.
            return Text.assemble(("unit", "yellow"), f" {uid}: ", (UNDEFINED, "yellow"))
        text = (n.get("content") or "").replace("\n", " / ")
        return Text.assemble((n["kind"], "cyan"), f" {uid}: {text[:70]}")

    def grow(branch: Tree, uid: str, seen: set[str]) -> None:
        for op_id in produced_by.get(uid, []):
            op = nodes[("operation", op_id)]
            label = Text.assemble((op["kind"], "magenta"), f" {op['name']} ({op_id})")
            op_branch = branch.add(label)
            if op_id in seen:
                op_branch.add(Text("(shown above)", style="dim"))
                continue
            seen.add(op_id)
            for _, child in sorted(consumes.get(op_id, [])):
                grow(op_branch.add(unit_label(child)), child, seen)

    root = Tree(unit_label(subgraph["answer_unit"]))
    grow(root, subgraph["answer_unit"], set())
    return root


def _attribution_lines(case_id: str, attribution: dict[str, Any] | None) -> list[str]:
    if attribution is None:
        return [f"attribution: not attributed yet (memtrace attribute {case_id})"]
    op = attribution.get("operation") or {}
    blamed = f" by {op['name']} ({op['kind']}, {op['id']})" if op else ""
    lines = [
        f"attribution: {attribution['status']}, {attribution.get('error_type') or '-'}{blamed},"
        f" confidence {attribution['confidence']:.2f}",
        f"reason: {attribution['reason']}",
    ]
    if attribution.get("decided_by"):
        lines.append(f"what would decide it: {attribution['decided_by']}")
    return lines


def case_view(shown: dict[str, Any]) -> RenderableType:
    """What ``memtrace show`` prints: the case, its attribution and its dependency tree."""
    case, subgraph = shown["case"], shown["subgraph"]
    lines = [
        f"case {case['id']} ({case['verdict']}) in project {case['project']!r}",
        f"question: {case['question']}",
        f"expected: {case['expected_answer']}",
        f"evidence: {', '.join(case['evidence_units']) or '-'}",
        *_attribution_lines(case["id"], shown["attribution"]),
    ]
    parts: list[RenderableType] = [Text(line) for line in lines]
    if subgraph is None:
        parts.append(Text("no answer unit: nothing to trace back"))
    else:
        cut = " (cut at the node limit)" if subgraph["truncated"] else ""
        parts.append(
            Text(
                f"what the answer depends on: {len(subgraph['nodes'])} nodes, "
                f"{len(subgraph['edges'])} edges{cut}"
            )
        )
        parts.append(subgraph_tree(subgraph))
    return Group(*parts)


def print_case(console: Console, shown: dict[str, Any]) -> None:
    console.print(case_view(shown), highlight=False)
