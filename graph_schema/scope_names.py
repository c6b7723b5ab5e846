"""The names a trace gives a case's scope (``service.attribution.scope``), kept as properties.

A ``conversation_id`` or ``user_id`` attribute names the conversation or user an operation or
unit belongs to; a ``store_id`` attribute of a memory names the memory store that holds it (the
OTLP converter sets it from ``gen_ai.memory.store.id``). Attributes are stored as one JSON
string, which no index reads inside, so the writer also keeps each of these as a property of its
own (``conversation_id``, ``user_id``, ``store_id``), with a ``(project, <key>)`` index on
operations and units (on units only for stores): a case's scope is then an index seek, whatever
else the project holds (``cypher/attribution/scope_messages``, ``store_memories``).

The value kept is the attribute's string; any other value (a number, a list) is kept as its
canonical JSON behind ``json:`` (so ``1``, ``1.0``, ``true`` and ``"1"`` stay four scopes, as
they were when scopes were matched in the JSON), and a value an index cannot hold (over
:data:`MAX_VALUE` characters, or not valid Unicode) as ``sha256:`` and a digest of that JSON.
The scope reads the lineage's values through :func:`scope_value` too, so both sides agree.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

SCOPE_KEYS = ("conversation_id", "user_id")
STORE_KEY = "store_id"
KEPT_KEYS = (*SCOPE_KEYS, STORE_KEY)
MAX_VALUE = 256


def scope_value(value: Any) -> str | None:
    """The property kept for an attribute's value; None for a missing or empty one."""
    if value is None or value == "":
        return None
    if isinstance(value, str) and len(value) <= MAX_VALUE and _encodable(value):
        return value
    canonical = json.dumps(value, sort_keys=True, separators=(",", ":"))
    if not isinstance(value, str) and len(canonical) <= MAX_VALUE:
        return "json:" + canonical
    return "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()


def scope_names(attributes: dict[str, Any] | None) -> dict[str, str | None]:
    """The properties kept for a node with these attributes, one per key of :data:`KEPT_KEYS`."""
    if not attributes:
        return dict.fromkeys(KEPT_KEYS)
    return {key: scope_value(attributes.get(key)) for key in KEPT_KEYS}


def _encodable(text: str) -> bool:
    try:
        text.encode()
    except UnicodeEncodeError:  # a lone surrogate: the driver cannot send it
        return False
    return True
