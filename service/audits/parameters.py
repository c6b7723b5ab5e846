"""An audit's own query parameters, read from the query string and checked against what the
audit declares (every problem reported at once)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from service.audits.models import AuditParameter
from service.audits.spec import AuditSpec
from service.errors import InvalidInput

COMMON_PARAMETERS = ("project", "skip", "limit", "cursor")
"""Query parameters every audit takes; the route reads them itself."""
_TRUE, _FALSE = {"true", "1", "yes"}, {"false", "0", "no"}


def _convert(param: AuditParameter, text: str) -> tuple[Any, str | None]:
    """(value, None), or (None, what is wrong with ``text``)."""
    value: Any = text
    if param.type == "int":
        try:
            value = int(text)
        except ValueError:
            return None, f"must be an integer, not {text[:40]!r}"
        if param.minimum is not None and value < param.minimum:
            return None, f"must be at least {param.minimum}"
        if param.maximum is not None and value > param.maximum:
            return None, f"must be at most {param.maximum}"
    elif param.type == "bool":
        if text.lower() not in _TRUE | _FALSE:
            return None, "must be true or false"
        value = text.lower() in _TRUE
    elif param.choices is not None and text not in param.choices:
        return None, f"must be one of {', '.join(param.choices)}"
    return value, None


def parse_parameters(spec: AuditSpec, given: Sequence[tuple[str, str]]) -> dict[str, Any]:
    """The audit's parameters from the query string's ``(name, value)`` pairs, defaults filled
    in. Every unknown, repeated or malformed one is reported at once (``InvalidInput``)."""
    declared = {p.name: p for p in spec.info.parameters}
    values: dict[str, Any] = {p.name: p.default for p in spec.info.parameters}
    problems: list[dict[str, Any]] = []
    seen: set[str] = set()
    for name, text in given:
        param = declared.get(name)
        if param is None:
            takes = ", ".join([*declared, *COMMON_PARAMETERS])
            msg = f"audit {spec.name!r} takes no parameter {name!r}; it takes {takes}"
        elif name in seen:
            msg = "given more than once"
        else:
            values[name], msg = _convert(param, text)  # type: ignore[assignment]
        seen.add(name)
        if msg is not None:
            problems.append({"loc": ["query", name], "msg": msg, "type": "audit_parameter"})
    if problems:
        names = ", ".join(sorted({str(p["loc"][1]) for p in problems}))
        raise InvalidInput(f"bad parameter(s) for audit {spec.name!r}: {names}", details=problems)
    return values
