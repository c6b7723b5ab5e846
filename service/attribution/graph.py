"""The part of a project's graph one attribution looks at, held in memory.

Built from the projected rows of ``attribution/ancestors`` (what the answer depends on),
``attribution/descendants`` (what was derived from the evidence) and ``attribution/scope_messages``.
They share one row shape:
``{id, kind, name, content, ts, attributes, is_operation, edges: [[type, unit_id, position]]}``.

``ts`` comes from those queries as ``[epoch seconds, nanosecond, offset seconds]`` rather than a
Neo4j DateTime: the driver's DateTime hydration (pytz, a calendar computed in Python) cost about
a third of an attribution job's CPU, and three integers make the same instant and local time in
microseconds (:func:`timestamp`, with ``service.neo4j_values.from_epoch``, which the
subgraph endpoint shares). A DateTime or datetime (the in-process benchmark's rows) is taken as
it is.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from neo4j.time import DateTime

from graph_schema import ENTRY_KEYS
from graph_schema.rules import QUESTION_TIME_KINDS
from service.neo4j_values import from_epoch

# Operation kinds that read the memory at question time; every other kind builds it.
READ_KINDS = QUESTION_TIME_KINDS
# Attributes whose text is part of what a unit says (LoCoMo's image turns keep the picture's
# caption there; OTLP spans and importers keep descriptions there).
TEXT_ATTRIBUTES = ("image_caption", "blip_caption", "caption", "alt_text", "description")


@dataclass(frozen=True)
class Node:
    id: str
    is_operation: bool
    kind: str
    name: str
    content: str
    ts: datetime | None
    entry: str | None  # memory entry this unit is a version of (attributes.memory_id/entry_id)
    system: str = ""
    session_id: str = ""
    attributes: dict[str, Any] = field(default_factory=dict, compare=False)

    def text(self) -> str:
        """What the unit says: its content plus text the trace put in attributes (an image's
        caption, say), which a reader of the unit would see too."""
        made: str | None = self.__dict__.get("_text")
        if made is None:  # a job's cases share nodes: each node's text is made once
            extra = [
                str(self.attributes[k])
                for k in TEXT_ATTRIBUTES
                if isinstance(self.attributes.get(k), str) and self.attributes[k].strip()
            ]
            made = "\n".join([self.content, *extra]) if extra else self.content
            object.__setattr__(self, "_text", made)  # not a field: equality and hash ignore it
        return made


PREPARED = "node"
"""The key of a prepared row's node (no projected row has it)."""
PREPARED_EDGES = "ordered_edges"
"""The key of a prepared operation row's (inputs, outputs), each ordered by position."""


def timestamp(value: Any) -> datetime | None:
    """A row's ``ts`` as an aware datetime. ``[seconds, nanosecond, offset]`` gives what the
    driver's ``DateTime.to_native()`` gives: the same instant, the same local time (so the same
    ``.date()``), nanoseconds cut to microseconds."""
    if isinstance(value, list):
        return from_epoch(value)
    if isinstance(value, DateTime):
        value = value.to_native()
    return _aware(value)


def _attributes(raw: Any) -> Any:
    return (json.loads(raw) if isinstance(raw, str) else raw) if raw else {}


def prepared(row: dict[str, Any]) -> dict[str, Any]:
    """The row with its node made (and an operation's edges ordered): for rows many cases read
    (a scope's messages, a job's ancestors), so each is decoded once, not once per case. A node
    is immutable, so graphs can share it (and the edge lists, which no graph changes)."""
    made = {**row, PREPARED: _node(row)}
    if row.get("is_operation"):
        made[PREPARED_EDGES] = _ordered_edges(row)
    return made


def _ordered_edges(row: dict[str, Any]) -> tuple[list[str], list[str]]:
    """An operation row's input and output unit ids, each in position order."""
    made = row.get(PREPARED_EDGES)
    if made is not None:
        return made  # type: ignore[no-any-return]
    ins = sorted((pos, uid) for kind, uid, pos in row["edges"] if kind == "CONSUMES")
    outs = sorted((pos, uid) for kind, uid, pos in row["edges"] if kind == "PRODUCES")
    return [uid for _, uid in ins], [uid for _, uid in outs]


def _node(row: dict[str, Any]) -> Node:
    made = row.get(PREPARED)
    if made is not None:
        return made  # type: ignore[no-any-return]
    attributes = _attributes(row.get("attributes"))
    if not isinstance(attributes, dict):
        attributes = {}
    entry = next((str(attributes[k]) for k in ENTRY_KEYS if attributes.get(k) is not None), None)
    return Node(
        id=row["id"],
        is_operation=bool(row["is_operation"]),
        kind=row.get("kind") or "other",
        name=row.get("name") or "",
        content=row.get("content") or "",
        ts=timestamp(row.get("ts")),
        entry=entry,
        system=row.get("system") or "",
        session_id=row.get("session_id") or "",
        attributes=attributes if isinstance(attributes, dict) else {},
    )


def _aware(ts: datetime | None) -> datetime | None:
    """Timestamps compare only when all carry a zone: a naive one is taken as UTC."""
    if ts is None or ts.tzinfo is not None:
        return ts
    return ts.replace(tzinfo=UTC)


@dataclass
class CaseGraph:
    """Units, operations and their ordered edges, with lookups both ways.

    Who consumed a unit is indexed eagerly only for the operations that build the memory
    (:meth:`building_consumers`); an operation reading at question time (:data:`READ_KINDS`) is
    looked up when :meth:`consumers_of` is asked. Why: where a retrieval reads the whole store,
    retrievals' inputs are nineteen in twenty of a case's edges, and what the walk asks of them
    is only who read a unit that nothing built from (a question), so indexing them for every
    case cost a fifth of a job's time.
    """

    units: dict[str, Node] = field(default_factory=dict)
    operations: dict[str, Node] = field(default_factory=dict)
    inputs: dict[str, list[str]] = field(default_factory=dict)
    outputs: dict[str, list[str]] = field(default_factory=dict)
    producers: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    _building: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    _reading: list[str] = field(default_factory=list)  # READ_KINDS operations, as added
    _reading_inputs: dict[str, frozenset[str]] = field(default_factory=dict)
    _consumers: dict[str, list[str]] = field(default_factory=dict)  # consumers_of, as asked
    _ancestors: dict[str, frozenset[str]] = field(default_factory=dict)  # ancestors_of, as asked

    def add_rows(self, rows: list[dict[str, Any]]) -> None:
        """Merge projected rows; edges are indexed once every node of the rows is known."""
        new_ops = []
        for row in rows:
            node = row.get(PREPARED) or _node(row)
            if node.is_operation:
                if node.id not in self.operations:
                    self.operations[node.id] = node
                    new_ops.append((node, row))
            else:
                self.units.setdefault(node.id, node)
        if new_ops:  # an operation added may read or make any unit: asked again, found anew
            self._consumers.clear()
            self._ancestors.clear()
        for node, row in new_ops:
            op = node.id
            # a prepared row's lists are shared by every graph: never changed in place
            ins, outs = self.inputs[op], self.outputs[op] = _ordered_edges(row)
            if node.kind in READ_KINDS:
                self._reading.append(op)
            else:
                for uid in ins:
                    self._building[uid].append(op)
            for uid in outs:
                self.producers[uid].append(op)

    def building_consumers(self, unit_id: str) -> list[str]:
        """The operations that consumed the unit to build the memory (every kind but
        :data:`READ_KINDS`), in the order they were added."""
        return self._building.get(unit_id, [])

    def consumers_of(self, unit_id: str) -> list[str]:
        """Every operation that consumed the unit, in the order they were added."""
        found = self._consumers.get(unit_id)
        if found is None:
            building = self._building.get(unit_id, [])
            reading = [op for op in self._reading if unit_id in self._inputs_of(op)]
            found = building + reading
            if building and reading:  # the order they were added in, as one list
                order = {op: i for i, op in enumerate(self.operations)}
                found.sort(key=order.__getitem__)
            self._consumers[unit_id] = found
        return found

    def _inputs_of(self, op: str) -> frozenset[str]:
        made = self._reading_inputs.get(op)
        if made is None:
            made = self._reading_inputs[op] = frozenset(self.inputs[op])
        return made

    def op_time(self, op_id: str) -> datetime | None:
        return self.operations[op_id].ts

    def known_units(self, ids: list[str]) -> list[Node]:
        """The units among ``ids`` whose content the graph holds."""
        return [self.units[i] for i in ids if i in self.units]

    def ancestors_of(self, unit_id: str) -> frozenset[str]:
        """Operation ids the unit depends on (walked in memory; kept until an operation is
        added: the walk asks of the answer's several times)."""
        made = self._ancestors.get(unit_id)
        if made is None:
            made = self._ancestors[unit_id] = frozenset(self._walk_ancestors(unit_id))
        return made

    def _walk_ancestors(self, unit_id: str) -> set[str]:
        seen: set[str] = set()
        reached = {unit_id}
        stack = [unit_id]
        while stack:
            for op in self.producers.get(stack.pop(), ()):
                if op not in seen:
                    seen.add(op)
                    # each unit once: a retrieval reading the whole store shares its hundreds
                    # of inputs with every other retrieval (a set difference runs in C)
                    fresh = set(self.inputs.get(op, ())) - reached
                    reached |= fresh
                    stack.extend(fresh)
        return seen
