"""Grow a project by copies of trace batches: the same conversations again under fresh ids.

A project reaches a million operations by many conversations of the same shape, not by one
conversation that never ends; a copy of a labelled batch is such a conversation at no cost of
generating it, and with the same content its attribution reads look the same as the original's.
Every id a batch defines or references (units, operations, cases, and a memory's ``memory_id``,
which names a memory across its versions) is prefixed with the copy's tag, so copies are disjoint
from each other and from the original: nothing a copy carries is taken for something stored
before. Timestamps are kept, so a copy falls inside any time window of the original's cases.

Most SDK and OpenTelemetry traces name no conversation, user or session: :func:`unnamed` strips
every such name, so a case's scope has to come from somewhere else; :func:`named` gives every
operation a ``conversation_id`` again (the named variant).
"""

from __future__ import annotations

import copy as _copy
from collections.abc import Iterable, Iterator
from typing import Any

NAMING_ATTRIBUTES = (
    "conversation_id",
    "user_id",
    "agent_id",
    "session_id",
    "session",
    "thread_id",
    "run_id",
)
"""Attributes that would tell the service which conversation, user or session a unit or an
operation belongs to (``session`` is LoCoMo's session number on its messages)."""

MEMORY_ID = "memory_id"


def unnamed(batch: dict[str, Any]) -> dict[str, Any]:
    """``batch`` with no conversation, user or session named: no ``session_id`` on operations and
    none of :data:`NAMING_ATTRIBUTES` on operations or units."""
    out = _copy.deepcopy(batch)
    for op in out["operations"]:
        op["session_id"] = None
        op["attributes"] = _without_names(op.get("attributes"))
    for unit in out["units"]:
        unit["attributes"] = _without_names(unit.get("attributes"))
    return out


def named(batch: dict[str, Any], conversation: str) -> dict[str, Any]:
    """``batch`` with ``conversation_id`` = ``conversation`` on every operation."""
    out = _copy.deepcopy(batch)
    for op in out["operations"]:
        op["attributes"] = {**(op.get("attributes") or {}), "conversation_id": conversation}
    return out


def _without_names(attributes: dict[str, Any] | None) -> dict[str, Any]:
    return {k: v for k, v in (attributes or {}).items() if k not in NAMING_ATTRIBUTES}


def copy_batch(batch: dict[str, Any], tag: str) -> dict[str, Any]:
    """``batch`` under fresh ids: every id and ``memory_id`` prefixed with ``<tag>-``."""

    def fresh(value: str) -> str:
        return f"{tag}-{value}"

    def attributes(values: dict[str, Any] | None) -> dict[str, Any]:
        out = dict(values or {})
        if isinstance(out.get(MEMORY_ID), str):
            out[MEMORY_ID] = fresh(out[MEMORY_ID])
        return out

    return {
        "project": batch["project"],
        "units": [
            {**u, "id": fresh(u["id"]), "attributes": attributes(u.get("attributes"))}
            for u in batch["units"]
        ],
        "operations": [
            {
                **o,
                "id": fresh(o["id"]),
                "inputs": [fresh(i) for i in o["inputs"]],
                "outputs": [fresh(i) for i in o["outputs"]],
                "attributes": attributes(o.get("attributes")),
            }
            for o in batch["operations"]
        ],
        "cases": [
            {
                **c,
                "id": fresh(c["id"]),
                "answer_unit": fresh(c["answer_unit"]),
                "evidence_units": [fresh(i) for i in c.get("evidence_units") or []],
            }
            for c in batch.get("cases", [])
        ],
    }


def truncated(batch: dict[str, Any], operations: int) -> dict[str, Any]:
    """The batch's first ``operations`` operations (a conversation cut short): the units they
    touch, and the cases whose answer one of them produced (evidence cut to units kept)."""
    ops = batch["operations"][:operations]
    touched = {u for o in ops for u in (*o["inputs"], *o["outputs"])}
    produced = {u for o in ops for u in o["outputs"]}
    return {
        "project": batch["project"],
        "units": [u for u in batch["units"] if u["id"] in touched],
        "operations": ops,
        "cases": [
            {**c, "evidence_units": [u for u in c.get("evidence_units") or [] if u in touched]}
            for c in batch.get("cases", [])
            if c["answer_unit"] in produced
        ],
    }


def copy_tag(number: int) -> str:
    """The tag of copy ``number``: ``c0000001``; the same number always gives the same ids."""
    return f"c{number:07d}"


def grow(
    bases: list[dict[str, Any]], first: int, operations: int
) -> Iterator[tuple[int, dict[str, Any]]]:
    """Copies numbered ``first``, ``first + 1``, ... of ``bases`` in turn (copy n of base
    ``n % len(bases)``) until they hold ``operations`` operations; the last copy is cut short
    to hit that number exactly. Yields (copy number, copied batch)."""
    left, number = operations, first
    while left > 0:
        base = bases[number % len(bases)]
        if len(base["operations"]) > left:
            base = truncated(base, left)
        yield number, copy_batch(base, copy_tag(number))
        left -= len(base["operations"])
        number += 1


def ids(batches: Iterable[dict[str, Any]]) -> list[str]:
    """Every id the batches define (units, operations, cases), repeats kept."""
    return [x["id"] for b in batches for key in ("units", "operations", "cases") for x in b[key]]
