"""Structured unit content as text for the judges.

Imported graphs store memory entries as JSON snapshots (``{"id": ..., "memory": ...,
"timestamp": ...}``) and retrieval results as JSON lists of them. Read as raw text, the keys,
ids and punctuation dilute a lexical judge's overlap measures, so the same memory scores lower
as a snapshot than as a sentence. ``as_text`` reads such content the way a person would: one
line per memory (its values, not its keys), identifiers left out.
"""

from __future__ import annotations

import json
import re
from typing import Any

_ID_LIKE = re.compile(
    r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$|^[0-9a-f]{24,}$"
)
_ID_KEYS = frozenset({"id", "event_id", "memory_id", "hash", "key", "trace_id", "uuid", "score"})
MAX_DEPTH = 16


def as_text(content: str) -> str:
    """``content`` itself, unless it is a JSON object or array: then its values as lines."""
    stripped = content.strip()
    if not stripped or stripped[0] not in "[{":
        return content
    try:
        value = json.loads(stripped)
    except (ValueError, RecursionError):
        return content
    lines: list[str] = []
    _lines(value, lines, 0)
    return "\n".join(line for line in lines if line.strip()) or content


def _lines(value: Any, out: list[str], depth: int) -> None:
    """One line per object of scalars; nested objects and list items on lines of their own."""
    if depth > MAX_DEPTH:
        return
    if isinstance(value, list):
        for item in value:
            _lines(item, out, depth + 1)
    elif isinstance(value, dict):
        scalars = []
        for key, item in value.items():
            if isinstance(item, dict | list):
                _lines(item, out, depth + 1)
            elif item is not None and not _is_identifier(str(key), item):
                scalars.append(str(item).strip())
        if scalars:
            out.append(" ; ".join(s for s in scalars if s))
    elif value is not None:
        out.append(str(value))


def _is_identifier(key: str, value: object) -> bool:
    return key.lower() in _ID_KEYS or (isinstance(value, str) and bool(_ID_LIKE.match(value)))
