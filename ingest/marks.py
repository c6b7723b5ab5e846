"""The part of the writer's marks a batch can settle by itself, before it touches the store.

The writer keeps two derived properties the audits seek on (README "Marks the writer keeps"):
``Unit.reaches_memory`` and ``Operation.rewrites_memory``. Both can be set entirely in Cypher
(``cypher/ingest/mark_reach.cypher``, ``mark_rewrites.cypher``), but doing so for every unit and
operation of an all-new batch cost about as much as writing the batch (measured on the audit
benchmark's Mem0 and RAG traces). Most of the answer is in the batch itself:

- a unit the batch defines reaches a memory when it is one, or when an operation of the batch
  read it and wrote a unit that reaches one; the store is walked only from what lies outside the
  batch and is not marked yet (``reach_in_batch``);
- whether an operation rewrote a memory (wrote a next version that does not hold the old one
  verbatim) is decided from the batch's own versions when it holds them all, by the same test
  as the Cypher (``rewrites_in_batch``, ``holds_verbatim``: tests/audits/test_degraded_updates.py
  checks that the two agree); the store is asked about the rest.

The units a batch names without defining them are read from the store first, in one statement
(``cypher/ingest/merge_unit_refs.cypher`` returns them): with them, a stream of small batches
whose operations read what earlier batches stored is settled the same way. Only for a batch
whose ids are all new (the writer's optimistic path): there, every unit the batch defines is
new, so nothing stored reads or writes it yet.
"""

from __future__ import annotations

import string
from collections.abc import Iterable, Mapping
from typing import Any

READS = frozenset({"retrieval", "response", "evaluation"})
"""Operation kinds that write no next version (``mark_rewrites.cypher`` says the same)."""


def reach_in_batch(
    units: Mapping[str, Mapping[str, Any]],
    stored: Mapping[str, Mapping[str, Any]],
    operations: Iterable[Mapping[str, Any]],
) -> tuple[set[str], list[str]]:
    """``(reached, ask)``. ``units`` are the batch's definitions (all new), ``stored`` the units
    it names without defining them, as the store holds them (``cypher/ingest/merge_unit_refs``).
    ``reached``: the ids of ``units`` that reach a memory through the batch's ``operations``.
    ``ask``: the units the store's walk (``mark_reach.cypher``) must start from: reached outputs
    of an operation that read a stored unit not marked yet (the walk marks it and goes on through
    the store), and outputs whose mark the store does not know (stored before marks existed)."""
    reached = {uid for uid, row in units.items() if row["kind"] == "memory"}
    reached.update(uid for uid, row in stored.items() if row["reaches_memory"])
    producers: dict[str, list[Mapping[str, Any]]] = {}
    ask: set[str] = set()
    ops = list(operations)
    for op in ops:
        for edge in op["outputs"]:
            producers.setdefault(edge["unit"], []).append(op)
            row = stored.get(edge["unit"])
            if edge["unit"] not in units and (row is None or row["reaches_memory"] is None):
                ask.add(edge["unit"])
    frontier = list(reached)
    while frontier:
        for op in producers.get(frontier.pop(), ()):
            for edge in op["inputs"]:
                uid = edge["unit"]
                if uid in units and uid not in reached:
                    reached.add(uid)
                    frontier.append(uid)
    for op in ops:
        if any(
            edge["unit"] not in units and not (stored.get(edge["unit"]) or {}).get("reaches_memory")
            for edge in op["inputs"]
        ):
            ask.update(e["unit"] for e in op["outputs"] if e["unit"] in reached)
    return reached & units.keys(), sorted(ask)


_BOUNDARY = frozenset(" \t\n\x0b\f\r" + string.punctuation)
"""Cypher's ``[\\s\\p{Punct}]`` (Java's ASCII whitespace and POSIX punctuation), as characters."""


def holds_verbatim(old: str | None, new: str | None) -> bool | None:
    """The pre-filter of ``mark_rewrites.cypher`` and ``audits/degraded_updates.cypher`` in
    Python: True when ``new`` holds ``old`` verbatim between word boundaries at its first
    occurrence (or ``old`` is empty), so no word of it can be lost; None when a content is
    missing (the store decides). Cypher's ``split`` keeps empty strings as ``str.split`` does."""
    if old is None or new is None:
        return None
    if old == "":
        return True
    around = new.split(old, 2)
    if len(around) < 2:
        return False
    before, between = around[0], around[1]
    return (before == "" or before[-1] in _BOUNDARY) and (between == "" or between[0] in _BOUNDARY)


def rewrites_in_batch(op: Mapping[str, Any], units: Mapping[str, Mapping[str, Any]]) -> bool | None:
    """Whether ``op`` (an operation row) wrote a next version of a memory that does not hold
    the old one verbatim, as ``mark_rewrites.cypher`` decides it, when ``units`` (the batch's
    and the stored ones it names) hold everything that takes; None when the store must be asked
    (a unit not among them, a missing content)."""
    if op["kind"] in READS:
        return False
    if any(edge["unit"] not in units for edge in (*op["outputs"], *op["inputs"])):
        return None
    outputs = [units[edge["unit"]] for edge in op["outputs"]]
    inputs = [units[edge["unit"]] for edge in op["inputs"]]
    for new in outputs:
        entry = new["memory_id"]
        if new["kind"] != "memory" or (
            entry is None and not (op["kind"] == "update" and len(outputs) == 1)
        ):
            continue
        for old in inputs:
            if old["kind"] != "memory" or old["memory_id"] != entry or old["id"] == new["id"]:
                continue
            verbatim = holds_verbatim(old["content"], new["content"])
            if verbatim is None:
                return None
            if not verbatim:
                return True
    return False
