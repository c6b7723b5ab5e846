"""Reading the values of a smartcomment execution graph: encoded snapshots, timestamps, nesting,
and the kind tables.

smartcomment stores every variable's snapshot as a string: ``repr(value)`` unless the tracing
code passed an ``encoding_fn`` (MemBase passes ``json.dumps`` for messages and memory entries).
So a string arrives quoted (``"'What does Alice do?'"``), a list as ``"['a', 'b']"``, a memory
entry as indented JSON. ``decode_value`` undoes the first two and leaves JSON as JSON text.
"""

from __future__ import annotations

import ast
import json
import math
from datetime import UTC, datetime
from typing import Any

MAX_NESTING = 64
"""Deepest nesting of objects and arrays accepted anywhere in a graph file. Real exports stay
under ten; a value nested hundreds deep would overflow the JSON encoder on the way to Neo4j."""

MAX_LITERAL = 200_000
"""Longest ``repr`` text decoded with ``ast.literal_eval``; longer ones are kept verbatim."""

# Unit kinds. First the class name (MemBase names the evaluation variables), then the category.
UNIT_CLASS_KINDS: dict[str, str] = {
    "query": "query",
    "prediction": "answer",
    "context": "context",
    "judge_score": "other",
    "judge_response": "other",
    "golden_answers": "other",
}

UNIT_KINDS: dict[str, str] = {
    "message": "message",
    "user_message": "message",
    "message & query": "query",
    "query": "query",
    "question": "query",
    "memory_entry": "memory",
    "memory": "memory",
    "memory_unit": "memory",
    "memcell": "memory",
    "fact": "memory",
    "memory_context": "context",
    "context": "context",
    "retrieved_context": "context",
    "retrieval_result": "context",
    "retrieval_results": "context",
    "search_result": "context",
    "similar_memories": "context",
    "sparse_retrieval_results": "context",
    "dense_retrieval_results": "context",
    "hybrid_retrieval_results": "context",
    "prompt": "prompt",
    "system_prompt": "prompt",
    "answer": "answer",
    "prediction": "answer",
    "deleted": "tombstone",
    "deletion": "tombstone",
    "tombstone": "tombstone",
}
"""Category -> unit kind. ``llm_response`` is deliberately absent: MemBase records raw responses,
cleaned responses, parsed facts and update actions under it, and only the QA ``prediction`` (by
class name) is an answer. Anything not listed is ``other``."""

OPERATION_KINDS: dict[str, str] = {
    "ingest": "ingest",
    "ingestion": "ingest",
    "boundary_detection": "ingest",
    "extraction": "extraction",
    "initialization": "extraction",
    "update": "update",
    "deletion": "deletion",
    "delete": "deletion",
    "embedding": "embedding",
    "retrieval": "retrieval",
    "response": "response",
    "generation": "response",
    "evaluation": "evaluation",
}
"""Operation category -> operation kind; anything else (smartcomment's ``sentinel`` included) is
``other``. An ``evaluation`` operation named like ``question-answering`` is a ``response``."""

DELETED_MARKER = "DELETED"


class GraphValueError(ValueError):
    """A value of the graph that cannot be imported; the message names where it is."""


def decode_value(value: object) -> tuple[str, Any]:
    """A snapshot as unit text, and the Python value it encodes (the text itself if unknown).

    Quoted ``repr`` strings become the string; ``repr`` lists, dicts and tuples become JSON text;
    JSON stays as it is; anything else is kept verbatim. Non-string values (files not written by
    smartcomment) become JSON text.
    """
    if value is None:
        return "", None
    if not isinstance(value, str):
        return json.dumps(value, ensure_ascii=False, sort_keys=True), value
    text = value.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        parsed = _literal(text)
        if isinstance(parsed, str):
            return parsed, parsed
    try:
        return value, json.loads(text)
    except (ValueError, RecursionError):
        pass
    if text[:1] in "[{(" and text[-1:] in "]})":
        parsed = _literal(text)
        if isinstance(parsed, list | dict | tuple):
            return json.dumps(parsed, ensure_ascii=False, default=repr), parsed
    return value, value


def _literal(text: str) -> Any:
    if len(text) > MAX_LITERAL:
        return None
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None


def as_number(value: object) -> float | None:
    """A finite number from a number or numeric text; None otherwise."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None
    try:
        number = float(value)
    except (ValueError, OverflowError):
        return None
    return number if math.isfinite(number) else None


def parse_timestamp(value: object, place: str = "timestamp") -> datetime | None:
    """``"YYYY-MM-DD HH:MM:SS.sss"`` (or ISO 8601, or epoch seconds) as UTC; None if unreadable.

    A naive time is read as UTC (smartcomment writes local time without an offset; only the
    order within one file matters). Raises ``GraphValueError`` naming ``place`` when the time is
    readable but has no UTC equivalent (year 1 or 9999 with an offset, say).
    """
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        try:
            return datetime.fromtimestamp(value, tz=UTC)
        except (OverflowError, OSError, ValueError) as e:
            raise GraphValueError(f"{place}: {value!r} is not a representable time") from e
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip()
    if text.endswith("Z"):
        text = text[:-1] + "+00:00"
    try:
        ts = datetime.fromisoformat(text)
    except ValueError:
        return None
    if ts.tzinfo is None:
        return ts.replace(tzinfo=UTC)
    try:
        return ts.astimezone(UTC)
    except OverflowError as e:
        raise GraphValueError(f"{place}: {value!r} is out of range once converted to UTC") from e


def positive_version(value: object, place: str) -> int | None:
    """A node's version as an int >= 1; None when absent; ``GraphValueError`` when invalid."""
    if value is None:
        return None
    number: float | None = None
    if isinstance(value, int) and not isinstance(value, bool):
        number = value
    elif isinstance(value, float | str) and not isinstance(value, bool):
        number = as_number(value)
    if number is None or number != int(number) or number < 1 or number > 2**53:
        raise GraphValueError(f"{place}: {value!r} is not a version (an integer >= 1)")
    return int(number)


def check_nesting(document: object, limit: int = MAX_NESTING) -> None:
    """Raise ``GraphValueError`` naming the first place nested deeper than ``limit`` levels.

    Iterative, so that the check itself cannot overflow the stack it protects; only containers
    are visited, and the path is rebuilt only for the error message.
    """
    # (container, depth, index of the parent entry, key in the parent)
    seen: list[tuple[object, int, int, str | int]] = [(document, 0, -1, "")]
    stack = [0]
    while stack:
        at = stack.pop()
        item, depth = seen[at][0], seen[at][1]
        if depth > limit:
            path: list[str | int] = []
            while at > 0:
                path.append(seen[at][3])
                at = seen[at][2]
            raise GraphValueError(
                f"{_place(tuple(reversed(path)))}: nested deeper than {limit} levels"
            )
        children = item.items() if isinstance(item, dict) else enumerate(item)  # type: ignore[arg-type]
        for key, child in children:
            if isinstance(child, dict | list):
                seen.append((child, depth + 1, at, key))
                stack.append(len(seen) - 1)


def _place(path: tuple[str | int, ...]) -> str:
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text


def unit_kind(category: str, class_name: str, content: str = "") -> str:
    """The unit kind of a node: by class name, then by category (tables above)."""
    by_class = UNIT_CLASS_KINDS.get(class_name.strip().lower())
    if by_class is not None:
        return by_class
    kind = UNIT_KINDS.get(category.strip().lower(), "other")
    if kind == "memory" and content.strip() == DELETED_MARKER:
        return "tombstone"
    return kind


def operation_kind(category: str, name: str) -> str:
    """The operation kind: by category, question answering as ``response``."""
    kind = OPERATION_KINDS.get(category.strip().lower(), "other")
    if kind == "evaluation" and is_qa_name(name):
        return "response"
    return kind


def is_qa_name(name: str) -> bool:
    n = name.lower().replace("_", "-")
    return "question-answering" in n or n.endswith("answer-question") or n == "qa"


def is_judge_name(name: str) -> bool:
    return "judge" in name.lower()


def is_delete_marker(class_name: str, category: str, content: str) -> bool:
    """MemBase's deletion marker: a ``"DELETED"`` variable of class ``delete_marker`` or
    category ``marker``, linked from the memory entry it deletes."""
    marked = class_name.strip().lower() == "delete_marker" or category.strip().lower() == "marker"
    return marked and content.strip() == DELETED_MARKER
