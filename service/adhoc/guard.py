"""Whether an ad-hoc query (``POST /cypher``) may run: read-only, and inside one project.

Neo4j is asked, not a pattern over the query: the query is planned with ``EXPLAIN`` (nothing
runs) and the plan's *structure* decides. Before that, ``service.adhoc.text`` has refused
backquoted names, so every name in the plan is letters, digits and ``_``.

1. The **query type** Neo4j reports must be ``r``; the query then also runs in a read-access
   transaction, so Neo4j would refuse a write even if this check were wrong.
2. Every **operator** must be on an allow-list: operators that only read what their inputs
   bound (expand, filter, project, join, sort, aggregate, ...) and the node scans and seeks of
   rule 3. Anything else (relationship scans and seeks, count-store lookups, procedure calls,
   ``LOAD CSV``, commands, operators this module does not know) is refused.
3. Every **node scan or seek** (where the plan starts reading the graph) must be pinned to
   ``$project``. Every relationship MemTrace writes joins two nodes of the same project, so what
   is reached from a node of the project is in the project: only the starting points matter.
   A scan is pinned when
   - it is an index seek whose condition, parsed into tokens, is an ``AND`` of conditions
     (no ``OR``/``XOR`` at its top level) one of which is exactly ``project = $project``; or
   - the first ``Filter`` above it (only ``CacheProperties`` in between) has, among its
     ``AND``-ed conditions (a parenthesised group of them opened, as Neo4j prints a pattern's
     properties ``(o.project = $project AND o.name = $autostring_0)``), exactly
     ``<v>.project = $project`` (or ``cache[<v>.project] = $project``) for the variable ``<v>``
     the scan binds, preceded only by conditions ``<v>.<key> = $<param>``. Neo4j evaluates
     the conditions in that order and stops at the first false one: the conditions before the
     pin cannot fail on a node of another project, and the later ones never see one, so none
     can leak it through an error (``1/0``). Pin filters holding quotes are not trusted (the
     planner turns literals into parameters, so real ones hold none).
4. No operator may carry a **nested plan** in its expressions: Neo4j plans a ``COUNT``/
   ``EXISTS``/``COLLECT`` subquery or a pattern comprehension inside a list comprehension,
   ``reduce``, ``CASE`` or ``any()`` as an expression whose scans are not operators of the
   tree; they show only as ``COUNT { MATCH ...`` in the operator's details, so any
   ``MATCH`` or ``COUNT|EXISTS|COLLECT {`` there is refused.

``$project`` is set by the service; a caller's parameters cannot name it. A refused query gets
a 400 with every reason. The rule is conservative: a query confined to its project in a way
the plan does not show is refused, never the other way round.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping
from typing import Any

from service.adhoc.text import QueryTextError, Token, tokens

# Leaves that read nodes from the store: each must be pinned (rule 3).
NODE_SCANS = {
    "AllNodesScan",
    "NodeByLabelScan",
    "UnionNodeByLabelsScan",
    "IntersectionNodeByLabelsScan",
    "SubtractionNodeByLabelsScan",
    "NodeByIdSeek",
    "NodeByElementIdSeek",
    "NodeIndexSeek",
    "NodeUniqueIndexSeek",
    "NodeIndexSeekByRange",
    "NodeUniqueIndexSeekByRange",
    "MultiNodeIndexSeek",
    "AssertingMultiNodeIndexSeek",
    "NodeIndexScan",
    "NodeIndexContainsScan",
    "NodeIndexEndsWithScan",
}
# Operators that read only what their inputs bound, or nothing from the store.
READS_ONLY_INPUTS = {
    "ProduceResults", "Projection", "Filter", "CacheProperties", "Argument", "EmptyRow",
    "Unwind", "Eager", "Limit", "ExhaustiveLimit", "Skip", "Top", "PartialTop", "Sort",
    "PartialSort", "Distinct", "OrderedDistinct", "EagerAggregation", "OrderedAggregation",
    "Aggregation", "Apply", "SemiApply", "AntiSemiApply", "LetSemiApply", "LetAntiSemiApply",
    "SelectOrSemiApply", "SelectOrAntiSemiApply", "LetSelectOrSemiApply",
    "LetSelectOrAntiSemiApply", "RollUpApply", "ConditionalApply", "AntiConditionalApply",
    "CartesianProduct", "NodeHashJoin", "NodeLeftOuterHashJoin", "NodeRightOuterHashJoin",
    "ValueHashJoin", "Optional", "Anti", "Union", "OrderedUnion", "NullifyMetadata",
    "ProjectEndpoints", "TriadicSelection", "TriadicBuild", "TriadicFilter", "ShortestPath",
    "Trail",
}  # fmt: skip
# Expansions from bound nodes, whatever their mode: Expand(All), VarLengthExpand(Pruning).
EXPANSIONS = (
    "Expand(", "OptionalExpand(", "VarLengthExpand(", "StatefulShortestPath(", "Repeat(",
    "BidirectionalRepeat(",
)  # fmt: skip
_SUBQUERY_WORDS = {"COUNT", "EXISTS", "COLLECT"}
_QUOTES = ("'", '"', "`")


def operator_name(plan: Mapping[str, Any]) -> str:
    return str(plan.get("operatorType", "")).split("@", 1)[0]


def _details(plan: Mapping[str, Any]) -> str:
    return str(plan.get("args", {}).get("Details", "") or "")


def _walk(
    plan: Mapping[str, Any], ancestors: tuple[Mapping[str, Any], ...] = ()
) -> Iterator[tuple[Mapping[str, Any], tuple[Mapping[str, Any], ...]]]:
    yield plan, ancestors
    for child in plan.get("children", []):
        yield from _walk(child, (plan, *ancestors))


def _texts(found: list[Token]) -> list[str]:
    return [t.text for t in found]


def split_top_level(found: list[Token], separators: set[str]) -> list[list[Token]]:
    """``found`` cut at separator tokens outside brackets and ``CASE ... END``."""
    parts: list[list[Token]] = [[]]
    depth = 0
    for token in found:
        word = token.text.upper() if token.kind == "word" else ""
        if token.text in ("(", "[", "{") or word == "CASE":
            depth += 1
        elif token.text in (")", "]", "}") or word == "END":
            depth -= 1
        if depth == 0 and (word in separators or token.text in separators):
            parts.append([])
        else:
            parts[-1].append(token)
    return parts


def _inside_parentheses(found: list[Token]) -> list[Token] | None:
    """What ``( ... )`` encloses when those two parentheses match each other, else None."""
    if len(found) < 2 or found[0].text != "(" or found[-1].text != ")":
        return None
    depth = 0
    for token in found[1:-1]:
        depth += (token.text == "(") - (token.text == ")")
        if depth < 0:  # ``(a) AND (b)``: the first parenthesis closes before the end
            return None
    return found[1:-1]


def conjuncts(found: list[Token]) -> list[list[str]]:
    """The ``AND``-ed parts of a condition in evaluation order, as token texts; none when the
    condition is not a plain conjunction (an ``OR``/``XOR`` at its top level).

    A part that is itself a conjunction in parentheses is opened: Neo4j prints the property
    conditions of ``(o:Operation {project: $project, name: 'x'})`` as one such group,
    ``(o.project = $project AND o.name = $autostring_0)``. A part in parentheses that is not a
    plain conjunction (``(a OR b)``) stays one part."""
    if len(split_top_level(found, {"OR", "XOR"})) != 1:
        return []
    parts: list[list[str]] = []
    for part in split_top_level(found, {"AND"}):
        inner = _inside_parentheses(part)
        opened = conjuncts(inner) if inner is not None else []
        parts.extend(opened or [_texts(part)])
    return parts


def _pins_variable(condition: list[str], variable: str) -> bool:
    return condition in (
        [variable, ".", "project", "=", "$project"],
        ["cache", "[", variable, ".", "project", "]", "=", "$project"],
    )


def _cannot_fail(condition: list[str], variable: str) -> bool:
    """``<v>.<key> = $<param>`` (or its cached form): true, false or null for a node of any
    project, never an error, so it may be checked before the pin without leaking anything."""
    if condition[:2] == ["cache", "["] and condition[5:6] == ["]"]:
        condition = [*condition[2:5], *condition[6:]]
    return (
        len(condition) == 5
        and condition[:2] == [variable, "."]
        and condition[2].isidentifier()
        and condition[3] == "="
        and condition[4][:1] == "$"
        and condition[4][1:].isidentifier()
    )


def _seek_is_pinned(found: list[Token]) -> bool:
    """Every index description of a seek (``UNIQUE u:Unit(project, id) WHERE ...``, several for
    a multi-node seek, ``cache[...]`` entries aside) has ``project = $project`` in its condition."""
    descriptions = [
        part
        for part in split_top_level(found, {","})
        if part and not (part[0].text == "cache" and part[1:2] and part[1].text == "[")
    ]
    if not descriptions:
        return False
    for description in descriptions:
        words = [t.text.upper() if t.kind == "word" else t.text for t in description]
        if "WHERE" not in words:
            return False
        condition = description[words.index("WHERE") + 1 :]
        if ["project", "=", "$project"] not in conjuncts(condition):
            return False
    return True


def scan_variable(found: list[Token]) -> str | None:
    """The node variable a scan or seek binds: ``n``, ``n:Label``, ``n WHERE id(n) = ...``,
    ``RANGE INDEX n:Label(prop) WHERE ...``."""
    if len(found) == 1 or (len(found) > 1 and found[1].text.upper() == "WHERE"):
        return found[0].text if found[0].kind == "word" else None
    for token, following in itertools.pairwise(found):
        if following.text == ":":
            return token.text if token.kind == "word" else None
    return None


def _filter_pins(
    ancestors: tuple[Mapping[str, Any], ...], variable: str | None
) -> tuple[bool, str]:
    """Whether the first Filter above a scan pins ``variable`` first; if not, the hint why."""
    if variable is None:
        return False, "the scan binds no named variable to pin"
    for above in ancestors:
        name = operator_name(above)
        if name == "CacheProperties":
            continue
        if name != "Filter":
            break
        details = _details(above)
        if any(q in details for q in _QUOTES):
            return False, "its filter holds quoted text"
        try:
            parts = conjuncts(tokens(details))
        except QueryTextError:
            return False, "its filter cannot be read"
        for part in parts:
            if _pins_variable(part, variable):
                return True, ""
            if not _cannot_fail(part, variable):
                break
        if any(_pins_variable(p, variable) for p in parts):
            return False, "other conditions are checked before the project"
        return False, ""
    return False, ""


def _nested_plan(found: list[Token]) -> str | None:
    for token, following in zip(found, [*found[1:], None], strict=False):
        word = token.text.upper() if token.kind == "word" else ""
        if word == "MATCH" or (word in _SUBQUERY_WORDS and following and following.text == "{"):
            return token.text
    return None


def _scan_problem(
    node: Mapping[str, Any], found: list[Token], ancestors: tuple[Mapping[str, Any], ...]
) -> str | None:
    name = operator_name(node)
    if "Index" in name and "Seek" in name and _seek_is_pinned(found):
        return None
    variable = scan_variable(found)
    if variable is not None and variable not in node.get("identifiers", []):
        variable = None
    pinned, why = _filter_pins(ancestors, variable)
    if pinned:
        return None
    shown = _details(node)[:120] or variable or "?"
    return (
        f"{name} of {shown} is not pinned to $project"
        + (f" ({why})" if why else "")
        + f": match it as ({variable or 'n'}:Label {{project: $project}})"
    )


def plan_problems(plan: Mapping[str, Any]) -> list[str]:
    """Every reason the plan may read outside the project (empty: it does not)."""
    problems = []
    for node, ancestors in _walk(plan):
        name = operator_name(node)
        details = _details(node)
        try:
            found = tokens(details)
        except QueryTextError:
            problems.append(f"{name}: its details cannot be read ({details[:80]!r})")
            continue
        nested = _nested_plan(found)
        if nested is not None:
            problems.append(
                f"{name} evaluates a subquery ({nested} ...) inside an expression, where its "
                "reads cannot be checked: use CALL { ... } or a plain "
                "COUNT/EXISTS/COLLECT { ... } outside list comprehensions, reduce, CASE "
                "and any()/all()"
            )
        if name in NODE_SCANS:
            problem = _scan_problem(node, found, ancestors)
            if problem:
                problems.append(problem)
        elif name not in READS_ONLY_INPUTS and not name.startswith(EXPANSIONS):
            problems.append(f"{name} is not allowed in an ad-hoc query ({details[:120]})")
    return problems


def query_problems(query_type: str | None, plan: Mapping[str, Any] | None) -> list[str]:
    """Reasons to refuse a query, from what ``EXPLAIN`` says of it."""
    if query_type != "r":
        kinds = {"rw": "reads and writes", "w": "writes", "s": "changes the schema"}
        return [f"the query {kinds.get(query_type or '', 'is not read-only')}: only reads run"]
    if plan is None:
        return ["Neo4j returned no plan for the query"]
    return plan_problems(plan)
