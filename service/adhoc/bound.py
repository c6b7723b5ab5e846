"""What one row of an ad-hoc query (``POST /cypher``) may bring back, bounded in Neo4j itself.

The answer's byte budget used to apply to rows the driver had already received: one row
holding a 268-million-character string reached the service whole (+900 MB of RSS), and four
at once ran Neo4j out of direct memory sending them (issue 21). So the caller's query runs
wrapped (``cypher/adhoc/bounded_read``): Neo4j estimates each row's size as JSON and sends the
row's values only when the estimate is within the answer's whole byte budget; otherwise every
column comes back null with the estimate, and the service stops there with ``truncated_by:
"bytes"``, as it would have stopped on the row itself.

The estimate (``cypher/adhoc/value_size``, one level per nesting level, ``DEPTH`` levels with
a column at level 1) is never more than the service's own count of the row, so the wrapped
query returns exactly the rows of the caller's query. A value nested deeper than ``DEPTH``
counts as over the budget: such a row is refused even when small.

Neo4j refuses ``CALL () { ... RETURN a.b }``: every returned expression of a subquery needs a
name. The caller's top-level ``RETURN`` items without ``AS`` are named here with the column
name Neo4j gave them (``EXPLAIN`` reports it), so the columns stay what the caller would see
without the wrapper. Names starting with ``RESERVED`` are the wrapper's own: a caller's
columns and parameters may not use them.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from cypher import query
from service.adhoc.text import Token, tokens

RESERVED = "_memtrace_"
ROW_BYTES = "_memtrace_row_bytes"
"""The wrapper's last column: the row's estimated size, in bytes of JSON."""
MAX_ROW_BYTES = "_memtrace_max_row_bytes"
"""The wrapper's parameter: the answer's byte budget, above which a row's values stay in Neo4j."""
DEPTH = 6
"""Nesting levels the estimate walks: a column of paths collected into a list is a list (1)
of paths (2) of nodes (3) with list properties (4) of strings (5)."""

_MARKER = re.compile(r"\{\{(\w+)\}\}")
_OPENERS, _CLOSERS = ("(", "[", "{"), (")", "]", "}")
# Words after which an expression is not complete, so a following ORDER, SKIP, LIMIT or
# RETURN is part of it (a variable named ``limit``), not a clause.
_OPEN_WORDS = {
    "AND", "OR", "XOR", "NOT", "IN", "IS", "STARTS", "ENDS", "CONTAINS", "WITH", "AS",
    "RETURN", "DISTINCT", "BY", "UNION", "ALL", "ORDER", "SKIP", "LIMIT", "OFFSET", "WHERE",
    "CASE", "WHEN", "THEN", "ELSE",
}  # fmt: skip
_ITEMS_END = {"ORDER", "SKIP", "OFFSET", "LIMIT", "UNION"}
# What may follow a label in a label expression (``(x:Unit|Case {project: $project})``).
_AFTER_LABEL = {")", "|", "&", "{", "]", ",", "WHERE", ""}


class UnboundableQuery(ValueError):
    """The query's returned items could not be told apart to name them."""


def backquote(name: str) -> str:
    """``name`` as a Cypher name, whatever its characters."""
    return "`" + name.replace("`", "``") + "`"


def _template(name: str) -> str:
    """A statement of ``cypher/`` without its header comments (they show the markers too)."""
    lines = query(name).splitlines()
    while lines and lines[0].startswith("//"):
        lines.pop(0)
    return "\n".join(lines).strip()


def _fill(template: str, **values: str) -> str:
    # One pass: text put in (the caller's query) is never searched for markers.
    return _MARKER.sub(lambda m: values[m[1]], template)


def _keyword(found: list[Token], i: int) -> str | None:
    """Token ``i`` in upper case if it is a word used as one: not a property or label name
    (``n.limit``, ``:Return``, ``:Unit|Case``), nor a map key or a variable with a label
    (``{end: 1}``)."""
    token = found[i]
    previous = found[i - 1].text if i > 0 else ""
    following = found[i + 1].text if i + 1 < len(found) else ""
    if token.kind != "word" or previous in (".", ":") or following == ":":
        return None
    if previous in ("|", "&", "!") and following.upper() in _AFTER_LABEL:
        return None
    return token.text.upper()


def _ends_expression(found: list[Token], i: int) -> bool:
    """Whether an expression may end with token ``i`` (so a clause may follow it)."""
    if i < 0:
        return False
    token = found[i]
    if token.kind == "word":
        after_as = i > 0 and found[i - 1].text.upper() == "AS"  # a name: AS limit
        return after_as or _keyword(found, i) not in _OPEN_WORDS
    if token.text == "*":  # RETURN *, not a product
        return i > 0 and found[i - 1].text.upper() in ("RETURN", "DISTINCT", "WITH")
    return token.kind != "symbol" or token.text in _CLOSERS


def _top_level(found: list[Token]) -> Iterator[tuple[int, str | None]]:
    """``(index, keyword)`` of each token outside brackets and ``CASE ... END``."""
    depth = 0
    for i, token in enumerate(found):
        word = _keyword(found, i)
        if token.text in _CLOSERS or word == "END":
            depth -= 1
        elif depth == 0:
            yield i, word
        if token.text in _OPENERS or word == "CASE":
            depth += 1


def _starts_clause(found: list[Token], i: int) -> bool:
    """Whether the ``RETURN`` at ``i`` is the clause (not a variable named ``return``)."""
    return (
        i == 0
        or _ends_expression(found, i - 1)
        or found[i - 1].text == "*"
        or found[i - 1].text.upper() in ("UNION", "ALL")
    )


def returned_items(found: list[Token]) -> list[list[list[Token]]]:
    """The items of each top-level ``RETURN`` (one per ``UNION`` branch), each as its tokens,
    brackets and ``CASE`` blocks included."""
    branches: list[list[list[Token]]] = []
    reading: list[list[Token]] | None = None  # the items of the RETURN being read
    start = 0  # where its current item starts
    for i, word in _top_level(found):
        if reading is not None and word in _ITEMS_END and _ends_expression(found, i - 1):
            reading.append(found[start:i])
            reading = None
        elif word == "RETURN" and _starts_clause(found, i):
            reading, start = [], i + 1
            branches.append(reading)
        elif reading is not None and word == "DISTINCT" and start == i:
            start = i + 1
        elif reading is not None and found[i].text == ",":
            reading.append(found[start:i])
            start = i + 1
    if reading is not None:
        reading.append(found[start:])
    return branches


def _is_named(item: list[Token]) -> bool:
    return (
        item == []
        or [t.text for t in item] == ["*"]
        or any(word == "AS" and i > 0 for i, word in _top_level(item))
    )


def name_returns(text: str, columns: list[str]) -> str:
    """``text`` with ``AS <column>`` after each top-level returned expression that has no name.

    ``columns`` are the query's columns as Neo4j reports them: the unnamed items of each
    ``RETURN`` are its last columns (``RETURN *, a.b`` puts the star's variables first)."""
    found = tokens(text)
    branches = returned_items(found)
    if columns and not branches:
        raise UnboundableQuery("no top-level RETURN found")
    insertions: list[tuple[int, str]] = []
    for items in branches:
        listed = [item for item in items if [t.text for t in item] != ["*"]]
        if len(listed) > len(columns):
            raise UnboundableQuery("a RETURN lists more items than the query has columns")
        first = len(columns) - len(listed)
        for column, item in zip(columns[first:], listed, strict=True):
            if not _is_named(item):
                end = item[-1].offset + len(item[-1].text)
                insertions.append((end, f" AS {backquote(column)}"))
    for end, name in sorted(insertions, reverse=True):
        text = text[:end] + name + text[end:]
    return text


def value_size(depth: int = DEPTH) -> str:
    """The estimate of ``_memtrace_v1``'s size as JSON, ``depth`` levels deep."""
    level_template = _template("adhoc/value_size")
    deeper = _template("adhoc/value_too_deep")
    for level in range(depth, 0, -1):
        deeper = _fill(level_template, level=str(level), next=str(level + 1), deeper=deeper)
    return deeper


def bounded_query(text: str, columns: list[str], depth: int = DEPTH) -> str:
    """The caller's query ``text`` (its ``columns`` as ``EXPLAIN`` reports them) wrapped so that
    Neo4j returns its rows with one more column, ``ROW_BYTES``, and nulls in place of the
    values of a row estimated above ``$MAX_ROW_BYTES``."""
    names = [backquote(c) for c in columns]
    return _fill(
        _template("adhoc/bounded_read"),
        query=name_returns(text, columns),
        columns=", ".join(names),
        row="{" + ", ".join(f"c{i}: {n}" for i, n in enumerate(names)) + "}",
        value_size=value_size(depth),
        nulled=", ".join(_fill(_template("adhoc/bounded_column"), column=n) for n in names),
    )
