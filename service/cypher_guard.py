"""Whether an ad-hoc query (``POST /cypher``) may run: read-only, and inside one project.

Neo4j itself is asked, not a pattern over the text: the query is planned with ``EXPLAIN`` (in a
read transaction, nothing runs) and

1. its **query type**, as Neo4j reports it, must be ``r`` (read only): ``rw``/``w`` (writes) and
   ``s`` (schema) are refused. The query then runs in a read-access transaction as well, so
   Neo4j would refuse a write even if this check were wrong;
2. every place its **plan** starts reading the graph must be pinned to the caller's project.
   Every relationship MemTrace writes joins two nodes of the same project, so what can be
   reached from a node of the project is in the project: only the starting points matter. A
   node scan or seek is accepted when the index it seeks has ``project = $project`` among its
   conditions, or when the filter right above it (nothing else in between) has
   ``<var>.project = $project`` as one of its top-level AND-ed conditions. Relationship scans,
   count-store lookups (counts over every project), procedure calls and ``LOAD CSV`` are refused.

``$project`` is set by the service; a caller's parameters cannot name it. A refused query gets
a 400 with every reason, e.g. "NodeByLabelScan of u:Unit is not pinned to $project: match it as
(u:Unit {project: $project})". The rule is conservative: some read-only queries confined to the
project in ways the plan does not show are refused too, never the other way round.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

PINNED_CONDITION = "project = $project"
# Operators that read no stored data; any other leaf must be a pinned node scan or seek.
_INERT = {"Argument", "Projection", "Unwind", "EmptyRow", "Input"}
# Operators passed through between a scan and the filter that pins it.
_PASS_THROUGH = {"Filter", "CacheProperties"}
_FORBIDDEN = ("ProcedureCall", "LoadCSV", "CountFromCountStore", "Relationship", "Show")
# "u.project = $project", or "cache[u.project] = $project" when the planner cached the property.
_VARIABLE_CONDITION = re.compile(
    r"^\(*(?:cache\[)?`?(?P<var>[^`.\s()\[\]]+)`?\.project\]? = \$project\)*$"
)


def operator_name(plan: Mapping[str, Any]) -> str:
    return str(plan.get("operatorType", "")).split("@", 1)[0]


def _details(plan: Mapping[str, Any]) -> str:
    return str(plan.get("args", {}).get("Details", ""))


def split_conjuncts(condition: str) -> list[str]:
    """Top-level ``AND`` parts of a condition (parentheses and quotes respected)."""
    parts, depth, start, quote = [], 0, 0, ""
    i = 0
    while i < len(condition):
        c = condition[i]
        if quote:
            quote = "" if c == quote else quote
        elif c in "'\"`":
            quote = c
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif depth == 0 and condition.startswith(" AND ", i):
            parts.append(condition[start:i].strip())
            start = i + 5
            i += 5
            continue
        i += 1
    parts.append(condition[start:].strip())
    return [p for p in parts if p]


def _seek_is_pinned(details: str) -> bool:
    """An index seek whose own conditions include ``project = $project``."""
    if " WHERE " not in details:
        return False
    conditions = details.split(" WHERE ", 1)[1].split(", cache[", 1)[0]
    return PINNED_CONDITION in split_conjuncts(conditions)


def _filter_pins(details: str, variable: str) -> bool:
    for part in split_conjuncts(details):
        match = _VARIABLE_CONDITION.match(part.strip())
        if match and match.group("var") == variable:
            return True
    return False


def _walk(
    plan: Mapping[str, Any], ancestors: tuple[Mapping[str, Any], ...] = ()
) -> Iterator[tuple[Mapping[str, Any], tuple[Mapping[str, Any], ...]]]:
    yield plan, ancestors
    for child in plan.get("children", []):
        yield from _walk(child, (plan, *ancestors))


def _node_variable(plan: Mapping[str, Any]) -> str | None:
    identifiers: Sequence[str] = plan.get("identifiers", [])
    named = [i for i in identifiers if not i.startswith(("  ", "anon_"))]
    return named[0] if len(named) == 1 else None


def plan_problems(plan: Mapping[str, Any]) -> list[str]:
    """Every reason the plan reads outside the project (empty: it does not)."""
    problems = []
    for node, ancestors in _walk(plan):
        name = operator_name(node)
        details = _details(node)
        if any(word in name for word in _FORBIDDEN):
            problems.append(f"{name} is not allowed in an ad-hoc query ({details[:120]})")
            continue
        reads_nodes = ("Scan" in name or "Seek" in name) and "Node" in name
        if not reads_nodes:
            if not node.get("children") and name not in _INERT:
                problems.append(f"{name} reads data this guard cannot confine to the project")
            continue
        if _seek_is_pinned(details):
            continue
        variable = _node_variable(node)
        pinned = False
        for above in ancestors:
            if operator_name(above) not in _PASS_THROUGH:
                break
            if (
                variable
                and operator_name(above) == "Filter"
                and _filter_pins(_details(above), variable)
            ):
                pinned = True
                break
        if not pinned:
            shown = details[:120] or variable or "?"
            problems.append(
                f"{name} of {shown} is not pinned to $project: match it as "
                f"({variable or 'n'}:Label {{project: $project}})"
            )
    return problems


def query_problems(query_type: str | None, plan: Mapping[str, Any] | None) -> list[str]:
    """Reasons to refuse a query, from what ``EXPLAIN`` says of it."""
    if query_type != "r":
        kinds = {"rw": "reads and writes", "w": "writes", "s": "changes the schema"}
        return [f"the query {kinds.get(query_type or '', 'is not read-only')}: only reads run"]
    if plan is None:
        return ["Neo4j returned no plan for the query"]
    return plan_problems(plan)
