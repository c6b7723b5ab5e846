"""Which records of a refused batch the service objected to, so the rest can still be stored.

The service writes a batch all or nothing, and says exactly what it refused, in ``details``: a
list of ``{"loc": [...], "msg": "..."}``. A 409 names each id that already names something
different (``{"loc": ["units", "msg-1"], ...}``), a 422 the location of every invalid item
(``{"loc": ["body", "units", 3, "kind"], ...}``). One bad record must not take its unrelated
neighbours down with it, so the delivery splits such a batch into the records named and the
rest, stores the rest, and keeps the named ones aside with the service's reason.
"""

from __future__ import annotations

from typing import Any

PARTS = ("units", "operations", "cases")


def split_refused(
    batch: dict[str, Any], status: int, body: Any
) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """``(rest, refused)`` when the refusal names some but not all records of ``batch``;
    ``None`` when it names none in particular (a 403, a 413, a batch-level 422) or all."""
    details = body.get("details") if isinstance(body, dict) else None
    if status == 409 and isinstance(details, list | dict):
        named = _conflicting(batch, _conflict_ids(details))
    elif status == 422 and isinstance(details, list):
        named = _invalid(batch, details)
    else:
        return None
    if not named:
        return None
    rest: dict[str, Any] = {"project": batch.get("project", "default")}
    refused: dict[str, Any] = {"project": rest["project"]}
    for part in PARTS:
        for index, record in enumerate(batch.get(part, [])):
            target = refused if (part, index) in named else rest
            target.setdefault(part, []).append(record)
    if not any(rest.get(part) for part in PARTS):
        return None
    return rest, refused


def record_count(batch: dict[str, Any]) -> int:
    return sum(len(batch.get(part, [])) for part in PARTS)


def _conflict_ids(details: list[Any] | dict[str, Any]) -> dict[str, set[str]]:
    """The conflicting ids per part, from ``[{"loc": [part, id], ...}]`` (or, from a service
    older than that shape, ``{part: [id, ...]}``)."""
    if isinstance(details, dict):
        return {part: set(details.get(part) or ()) for part in PARTS}
    ids: dict[str, set[str]] = {part: set() for part in PARTS}
    for item in details:
        loc = item.get("loc") if isinstance(item, dict) else None
        if isinstance(loc, list) and len(loc) == 2 and loc[0] in ids:
            ids[loc[0]].add(str(loc[1]))
    return ids


def _conflicting(batch: dict[str, Any], ids: dict[str, set[str]]) -> set[tuple[str, int]]:
    """Records that define an id the service already holds with other content; an operation
    also when a unit it defines inline (an object among its inputs or outputs) is one."""
    return {
        (part, index)
        for part in PARTS
        for index, record in enumerate(batch.get(part, []))
        if record.get("id") in ids[part] or _defines_unit(record, ids["units"])
    }


def _defines_unit(record: dict[str, Any], unit_ids: set[str]) -> bool:
    inline = [*record.get("inputs", []), *record.get("outputs", [])]
    return any(isinstance(unit, dict) and unit.get("id") in unit_ids for unit in inline)


def _invalid(batch: dict[str, Any], details: list[Any]) -> set[tuple[str, int]]:
    """Records an error location points into; empty when any location is not inside one record
    (then the batch as a whole is at fault)."""
    named = set()
    for item in details:
        loc = item.get("loc") if isinstance(item, dict) else None
        if not (isinstance(loc, list) and len(loc) >= 3 and loc[0] == "body"):
            return set()
        part, index = loc[1], loc[2]
        if part not in PARTS or not isinstance(index, int):
            return set()
        if not 0 <= index < len(batch.get(part, [])):
            return set()
        named.add((part, index))
    return named
