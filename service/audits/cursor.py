"""The opaque cursor of the audits that page over a project's failed cases
(``deleted_then_needed``, ``retrieval_misses``).

``skip`` made the store walk every failed case before the page again, so a far page cost the
whole project; a cursor names where the next page starts instead: the failed case (by id, the
order of the key index the statement seeks) and how many of that case's candidates an earlier
page already read. It also carries the audit and its parameters, which decide what the
candidates are: a cursor used with another audit or other parameters would start somewhere
meaningless, so it is refused (422) with what differs. The text is base64url of JSON: opaque to
callers, readable in a bug report.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass
from typing import Any

from service.errors import InvalidInput


@dataclass(frozen=True)
class Position:
    """Where a page starts: the first failed case with id >= ``case``, skipping ``skip`` of its
    candidates (those an earlier page read)."""

    case: str = ""
    skip: int = 0


def encode(audit: str, params: dict[str, Any], position: Position) -> str:
    text = json.dumps(
        {"audit": audit, "params": params, "case": position.case, "skip": position.skip},
        sort_keys=True,
        separators=(",", ":"),
    )
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def _bad(msg: str) -> InvalidInput:
    return InvalidInput(
        f"bad cursor: {msg}; pass the next_cursor of the previous page unchanged, or no cursor "
        "for the first page",
        details=[{"loc": ["query", "cursor"], "msg": msg, "type": "cursor"}],
    )


def decode(text: str | None, audit: str, params: dict[str, Any]) -> Position:
    """The position ``text`` names (the start without one); ``InvalidInput`` (422) saying what
    is wrong for a cursor this service did not give, or gave for another audit or parameters."""
    if text is None:
        return Position()
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
        value = json.loads(raw)
    except (binascii.Error, ValueError):
        raise _bad("not a cursor this service gave (not base64url-encoded JSON)") from None
    if not isinstance(value, dict) or set(value) != {"audit", "params", "case", "skip"}:
        raise _bad("not a cursor this service gave (not the fields of one)")
    case, skip = value["case"], value["skip"]
    if not isinstance(case, str) or not isinstance(skip, int) or skip < 0:
        raise _bad("its case must be a string and its skip a non-negative integer")
    if value["audit"] != audit:
        raise _bad(f"it pages audit {value['audit']!r}, not {audit!r}")
    if value["params"] != params:
        raise _bad(f"it was made with parameters {value['params']}, this request has {params}")
    return Position(case, skip)
