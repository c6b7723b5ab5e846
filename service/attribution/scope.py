"""The scope of a case: which source units may be its evidence, and until when.

An attribution must depend on the case's own lineage only, never on what else the project holds.
A case's *scope* is read from the answer's lineage (every operation and unit the answer depends
on), in this order:

1. **Conversation or user attributes.** Any ``conversation_id`` or ``user_id`` attribute
   (:data:`SCOPE_ATTRIBUTES`) on the lineage's operations or units names the conversation or user
   the case belongs to. Source messages in scope: those consumed by an operation carrying one of
   these values, or carrying one themselves.
2. **Session ids.** Else the ``session_id`` of the lineage's operations: source messages consumed
   by an operation of one of these sessions. Session ids are taken as unique within a project
   (two conversations never share one; tracers use a run, thread or user id).
3. **The project.** Else (the lineage names no conversation, user or session at all, as an
   OTLP trace without those attributes) every message of the project, within the limits below.
   Such a case's evidence can sit in another trace (a turn remembered yesterday), so nothing
   narrower is right; name a scope to make a case independent of the rest of the project.

In every case the source messages among the answer's ancestors are candidates too (the
``source message`` rule of ``graph_schema/rules.py``, on the operations the case's graph holds:
the answering call's own message, read by the response alone, is none), and two limits hold:

- **Systems.** When the lineage's operations name systems, only operations of those systems
  bring messages into scope: a second pipeline tracing the same conversation into the project
  is not this case's memory.
- **Time.** A message recorded after the answer (its ``ts``, else the time of the first
  operation that read it) is never a candidate; :attr:`Scope.until` is the answer operation's
  time.

So the same failed case gives the same candidates (and the same attribution) alone in a project
or next to thousands of other conversations, and a later session repeating a sentence cannot
take the evidence's place.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from datetime import datetime

from graph_schema.rules import is_source_message
from service.attribution.graph import CaseGraph, Node

SCOPE_ATTRIBUTES = ("conversation_id", "user_id")


@dataclass(frozen=True)
class Scope:
    """Where a case's evidence may come from; see the module docstring."""

    until: datetime | None
    systems: tuple[str, ...] = ()
    attributes: tuple[tuple[str, str], ...] = ()  # (key, canonical JSON of the value)
    sessions: tuple[str, ...] = ()
    lineage: tuple[str, ...] = ()  # message units among the answer's ancestors

    @property
    def named_by(self) -> str:
        """How the trace named the scope: ``attributes``, ``sessions`` or ``project``."""
        return "attributes" if self.attributes else "sessions" if self.sessions else "project"

    @property
    def whole_project(self) -> bool:
        """The lineage names no scope: every message of the project (within the limits)."""
        return not self.attributes and not self.sessions

    def fragments(self) -> list[str]:
        """The attributes as they appear in stored canonical JSON (``"key":value``)."""
        return [f"{json.dumps(key)}:{value}" for key, value in self.attributes]


def scope_of(graph: CaseGraph, answer_unit: str, response_op: str) -> Scope:
    """The scope named by the answer's lineage (operations and units it depends on)."""
    ops = graph.ancestors_of(answer_unit)
    # a retrieval that reads the whole store lists every memory: sets merged in C, not per edge
    units: set[str] = set().union(
        *(graph.inputs.get(op, ()) for op in ops), *(graph.outputs.get(op, ()) for op in ops)
    )
    nodes = [graph.operations[o] for o in ops] + graph.known_units(list(units))
    found: set[tuple[str, str]] = set().union(*map(_names, nodes))
    systems = {graph.operations[o].system for o in ops if graph.operations[o].system}
    sessions = {graph.operations[o].session_id for o in ops if graph.operations[o].session_id}
    until = graph.op_time(response_op)
    lineage = sorted(
        node.id
        for node in nodes
        if node.kind == "message"  # the rule's first test: most of a lineage is memories
        and not node.is_operation
        and _source(graph, node.id)
        and recorded_by(graph, node.id, until)
    )
    return Scope(
        until=until,
        systems=tuple(sorted(systems)),
        attributes=tuple(sorted(found)),
        sessions=() if found else tuple(sorted(sessions)),
        lineage=tuple(lineage),
    )


def _names(node: Node) -> frozenset[tuple[str, str]]:
    """The (attribute, canonical JSON value) pairs of :data:`SCOPE_ATTRIBUTES` a node names.
    Kept on the node: a job's cases share their nodes, and every case of a conversation reads
    the same hundreds of them (the node is immutable; equality and hash ignore the entry)."""
    made: frozenset[tuple[str, str]] | None = node.__dict__.get("_scope_names")
    if made is None:
        made = frozenset(
            (key, _canonical(node.attributes[key]))
            for key in SCOPE_ATTRIBUTES
            if node.attributes.get(key) not in (None, "")
        )
        object.__setattr__(node, "_scope_names", made)
    return made


def _canonical(value: object) -> str:
    """A value as stored canonical JSON; the lineage's every node names the same few values
    (its conversation), so a hashable one is written once per process, not once per node."""
    if isinstance(value, str | int | float | bool):
        return _canonical_scalar(value)
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


@functools.lru_cache(maxsize=4096, typed=True)  # 1, 1.0 and True are equal keys otherwise
def _canonical_scalar(value: str | int | float | bool) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def _source(graph: CaseGraph, unit_id: str) -> bool:
    if graph.units[unit_id].kind != "message":  # the rule's first test, before listing readers
        return False
    # The rule asks of the readers only whether there are none or one builds the memory: when
    # one builds, its kind decides alone, and the question-time readers (every retrieval, where
    # a retrieval reads the whole store) need not be looked up.
    readers = graph.building_consumers(unit_id) or graph.consumers_of(unit_id)
    return is_source_message(
        graph.units[unit_id].kind,
        [graph.operations[o].kind for o in graph.producers.get(unit_id, [])],
        [graph.operations[o].kind for o in readers],
    )


def recorded_at(graph: CaseGraph, unit_id: str) -> datetime | None:
    """When a unit was recorded: its own ``ts``, else the first operation that read or made it."""
    unit = graph.units.get(unit_id)
    if unit is not None and unit.ts is not None:
        return unit.ts
    times = [
        t
        for op in [*graph.producers.get(unit_id, []), *graph.consumers_of(unit_id)]
        if (t := graph.op_time(op)) is not None
    ]
    return min(times, default=None)


def recorded_by(graph: CaseGraph, unit_id: str, until: datetime | None) -> bool:
    """Whether the unit was recorded no later than ``until`` (unknown times count as in time)."""
    when = recorded_at(graph, unit_id)
    return until is None or when is None or when <= until
