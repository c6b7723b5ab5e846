"""What ``POST /cypher`` checks in the query *text*, before Neo4j sees it.

Neo4j's parser and plan printer recurse once per level of nesting: ``RETURN ((((1))))`` 500
levels deep, 150+ nested ``CASE`` or a 3,000-term sum overflow their stack, and the server then
never answers (issue 9: requests hung for minutes and starved the driver's pool). A deadline on
the client side cannot stop that thread, so such text must never reach Neo4j. A small tokenizer
(string literals, comments and backquoted names respected) measures it:

- **length** in characters;
- **depth**: how deeply ``( [ {`` and ``CASE ... END`` nest, counted together;
- **operators**: how many operator tokens (arithmetic, comparison, boolean, string and list
  operators, property access ``.``, ``:``, ``|``) the text has, which bounds the longest chain
  such as ``1 + 1 + ... + 1`` (Neo4j nests those as deeply as parentheses).

The limits (``Settings.cypher_max_*``) were set from what this machine's Neo4j 5.26 survived and
what the project's own queries need; the numbers are in the settings' docstrings.

The text must also be one plain query: it starts with a reading clause (``MATCH``, ``OPTIONAL
MATCH``, ``WITH``, ``UNWIND``, ``RETURN``, ``CALL``), so ``CYPHER`` options (``debug=``,
``runtime=``, ...), ``EXPLAIN``/``PROFILE``, ``USE`` and commands never run, and it has no ``;``.
Backquoted names are refused: Neo4j copies names into the plan it shows, and a name is the one
thing a caller could shape to look like a pinning predicate there. Without backquotes a name is
letters, digits and ``_`` only, so the plan checks in ``service.adhoc.guard`` read names that
cannot contain spaces, ``$``, ``=`` or keywords.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

FIRST_WORDS = ("MATCH", "OPTIONAL", "WITH", "UNWIND", "RETURN", "CALL")
_OPERATOR_WORDS = {"AND", "OR", "XOR", "NOT", "IN", "IS", "STARTS", "ENDS", "CONTAINS"}
_OPERATOR_SYMBOLS = {
    "+", "-", "*", "/", "%", "^", "=", "<>", "!=", "<", ">", "<=", ">=", "=~", ".", ":", "|",
    "&", "!", "||", "->", "<-", "..", "::",
}  # fmt: skip
_OPENERS = {"(": ")", "[": "]", "{": "}"}
_TOKEN = re.compile(
    r"""
    (?P<space>\s+)
  | (?P<line_comment>//[^\n]*)
  | (?P<block_comment>/\*.*?\*/)
  | (?P<string>'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")
  | (?P<backquoted>`(?:[^`]|``)*`)
  | (?P<parameter>\$(?:[^\W\d]\w*|\d+))
  | (?P<number>\d[\w.]*)
  | (?P<word>[^\W\d]\w*)
  | (?P<symbol><>|!=|<=|>=|=~|->|<-|\.\.|::|\|\||[^\s\w])
    """,
    re.VERBOSE | re.DOTALL,
)


class QueryTextError(ValueError):
    """The text cannot be sent to Neo4j; ``reason`` says why in one sentence."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class Token:
    kind: str
    text: str
    offset: int


@dataclass(frozen=True)
class TextLimits:
    max_length: int
    max_depth: int
    max_operators: int


def tokens(text: str) -> list[Token]:
    """Cypher tokens without spaces and comments; an unterminated string, comment or
    backquoted name is an error (it would make the rest of the text unreadable here)."""
    found, at = [], 0
    while at < len(text):
        match = _TOKEN.match(text, at)
        if match is None or match.lastgroup is None:
            snippet = text[at : at + 20]
            raise QueryTextError(
                f"unterminated string, comment or name at offset {at}: {snippet!r}"
            )
        if match.lastgroup not in ("space", "line_comment", "block_comment"):
            found.append(Token(match.lastgroup, match.group(), at))
        at = match.end()
    return found


def depth_and_operators(found: list[Token]) -> tuple[int, int]:
    """The deepest nesting of brackets and ``CASE`` blocks, and the number of operators."""
    depth = deepest = operators = 0
    for token in found:
        word = token.text.upper() if token.kind == "word" else None
        if token.text in _OPENERS or word == "CASE":
            depth += 1
            deepest = max(deepest, depth)
        elif token.text in (")", "]", "}") or word == "END":
            depth = max(depth - 1, 0)
        if (token.kind == "symbol" and token.text in _OPERATOR_SYMBOLS) or word in _OPERATOR_WORDS:
            operators += 1
    return deepest, operators


def check_query_text(text: str, limits: TextLimits) -> None:
    """Raise ``QueryTextError`` unless ``text`` is one plain query within ``limits``."""
    if len(text) > limits.max_length:
        raise QueryTextError(f"the query is longer than {limits.max_length} characters")
    found = tokens(text)
    if not found:
        raise QueryTextError("the query is empty")
    first = found[0].text.upper()
    if first not in FIRST_WORDS:
        raise QueryTextError(
            f"the query starts with {found[0].text[:40]!r}: an ad-hoc query is one plain query "
            f"starting with {', '.join(FIRST_WORDS)} (no CYPHER options, EXPLAIN, PROFILE, "
            "USE or commands)"
        )
    for token in found:
        if token.kind == "backquoted":
            raise QueryTextError(
                f"backquoted name {token.text[:40]} at offset {token.offset}: names in an "
                "ad-hoc query must be plain (letters, digits, _)"
            )
        if token.text == ";":
            raise QueryTextError("the query has a ';': send one statement")
        if token.kind == "word" and token.text.upper() == "USE":
            raise QueryTextError(f"USE at offset {token.offset}: the database is fixed")
    deepest, operators = depth_and_operators(found)
    if deepest > limits.max_depth:
        raise QueryTextError(
            f"the query nests brackets and CASE {deepest} levels deep; at most "
            f"{limits.max_depth} are allowed"
        )
    if operators > limits.max_operators:
        raise QueryTextError(
            f"the query has {operators} operators; at most {limits.max_operators} are allowed"
        )
