"""What ``POST /cypher`` accepts as query parameters: values Neo4j can take, each refused with a
422 naming the parameter rather than failing deep in the driver (a 500 before issue 9).

JSON allows what Bolt cannot carry: integers outside 64 bits, lone UTF-16 surrogates in
strings (``"\\ud800"``), numbers like ``1e400`` (Python reads them as infinity). Nesting is
bounded too, so that checking (and the driver's encoding) never recurses deeply.
"""

from __future__ import annotations

import math
import re
from typing import Any

from service.errors import InvalidInput

MAX_DEPTH = 16
"""Deepest nesting of lists and maps in one parameter value (a filter list of maps is 2)."""
_INT64 = (-(2**63), 2**63 - 1)
_NAME = re.compile(r"[^\W\d]\w*")


def _problem(value: Any, depth: int) -> str | None:
    if depth > MAX_DEPTH:
        return f"nested more than {MAX_DEPTH} levels deep"
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return None if _INT64[0] <= value <= _INT64[1] else "integer outside 64 bits"
    if isinstance(value, float):
        return None if math.isfinite(value) else "number too large for a 64-bit float"
    if isinstance(value, str):
        return _string_problem(value)
    if isinstance(value, list):
        for item in value:
            if found := _problem(item, depth + 1):
                return found
        return None
    if isinstance(value, dict):
        for key, item in value.items():
            if found := (_string_problem(key) or _problem(item, depth + 1)):
                return found
        return None
    return f"unsupported value of type {type(value).__name__}"


def _string_problem(text: str) -> str | None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "string with a lone surrogate (not valid Unicode)"
    return None


def check_parameters(parameters: dict[str, Any]) -> None:
    """Raise ``InvalidInput`` listing every parameter Neo4j could not take."""
    details = []
    for name, value in parameters.items():
        loc = ["body", "parameters", name if _string_problem(name) is None else repr(name)]
        if not _NAME.fullmatch(name):
            details.append({"loc": loc, "msg": "a parameter name is letters, digits and _"})
        elif found := _problem(value, 1):
            details.append({"loc": loc, "msg": found})
    if details:
        raise InvalidInput(
            f"{len(details)} parameter(s) Neo4j cannot take; see details", details=details
        )
