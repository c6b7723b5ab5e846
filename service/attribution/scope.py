"""The scope of a case: which source units may be its evidence, and until when.

An attribution must depend on the case's own lineage only, never on what else the project holds.
A case's *scope* is read from the answer's lineage (every operation and unit the answer depends
on), in this order:

1. **Conversation or user names.** A ``conversation_id`` or ``user_id`` (:data:`SCOPE_KEYS`,
   kept by the writer as properties, ``graph_schema/scope_names.py``) on the lineage's operations
   or units names the conversation or user the case belongs to. Source messages in scope: those
   consumed by an operation naming one of these values, or naming one themselves.
2. **Session ids.** Else the ``session_id`` of the lineage's operations: source messages consumed
   by an operation of one of these sessions. Session ids are taken as unique within a project
   (two conversations never share one; tracers use a run, thread or user id).
3. **The lineage's neighbourhood.** Else (the lineage names no conversation, user or session, as
   most SDK and OpenTelemetry traces) the messages within :data:`NEIGHBOURHOOD_STEPS` steps of the
   lineage through the operations that build the memory (``cypher/attribution/neighbourhood``):
   from the memories, records, answers and messages of the lineage (:attr:`Scope.seeds`), and
   every memory of the stores the lineage's memories belong to (a ``store_id`` attribute, as
   OTLP memory records carry: :attr:`Scope.stores`, ``cypher/attribution/store_memories``), the
   building operations that made or read them, the units those made or read, and so on. So a
   message an extraction read and dropped, or a memory an update deleted, is found from the
   memories the answer's search read, without reading anything beyond them: a step never goes
   through a retrieval, a response or an evaluation (which read the store at question time and
   would join every conversation of a shared store), nor through a query, context or prompt
   unit (a system prompt is read by every call of a project). The read stops at the graph limit
   and says so (``searched.scope_cut``): the neighbourhood of a case depends on its lineage,
   never on the size of the project, but a store read by every search can be big.

   When the neighbourhood holds no message at all (a search whose records share no id with
   what was written: an OpenInference retriever names no store), the last resort is the
   messages read by the project's last :data:`RECENT_OPERATIONS` building operations of the
   case's systems before the answer (``cypher/attribution/recent_messages``), reported as
   ``searched.scope = "recent"``, and as cut when the window was full.

   Before, such a case read every message of the project: its cost and, once the project passed
   the graph limit, its result changed with the project. Its known limit now: an answer whose
   search read no memory has no link to the store, and its evidence must be named (or its
   trace must name its conversation, user or session).

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

from dataclasses import dataclass
from datetime import datetime

from graph_schema import SCOPE_KEYS, STORE_KEY, scope_value
from graph_schema.rules import is_source_message, quotes
from service.attribution.graph import CaseGraph, Node

NEIGHBOURHOOD_STEPS = 4
"""Steps from the lineage (unit, building operation, unit): a record to its memory, the memory
to the update that made it, that update's extracted fact, the fact to the messages its extraction
read is the longest path of the pipelines MemTrace is tested on (a deletion: one more)."""

RECENT_OPERATIONS = 2_000
"""The last resort's window: the project's latest building operations before the answer."""

NEIGHBOURHOOD_KINDS = ("message", "memory", "tombstone", "answer", "other")
"""Unit kinds a neighbourhood step goes through (and seeds it); not query, context or prompt."""


@dataclass(frozen=True)
class Scope:
    """Where a case's evidence may come from; see the module docstring."""

    until: datetime | None
    systems: tuple[str, ...] = ()
    attributes: tuple[tuple[str, str], ...] = ()  # (key, kept value: graph_schema/scope_names)
    sessions: tuple[str, ...] = ()
    lineage: tuple[str, ...] = ()  # message units among the answer's ancestors
    seeds: tuple[str, ...] = ()  # where an unnamed scope's neighbourhood starts
    stores: tuple[str, ...] = ()  # memory stores whose memories seed it too

    @property
    def named_by(self) -> str:
        """How the scope was found: ``attributes``, ``sessions`` or ``lineage``."""
        return "attributes" if self.attributes else "sessions" if self.sessions else "lineage"

    @property
    def unnamed(self) -> bool:
        """The lineage names no scope: its neighbourhood is the scope."""
        return not self.attributes and not self.sessions

    def values(self, key: str) -> list[str]:
        """The kept values of one scope key (``conversation_id``, ``user_id``) it names."""
        return [value for k, value in self.attributes if k == key]


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
    named = found or sessions
    units_ = [] if named else [n for n in nodes if not n.is_operation]
    seeds = sorted(n.id for n in units_ if n.kind in NEIGHBOURHOOD_KINDS)
    stores = {
        value
        for n in units_
        if n.kind in ("memory", "tombstone")
        and (value := scope_value(n.attributes.get(STORE_KEY))) is not None
    }
    return Scope(
        until=until,
        systems=tuple(sorted(systems)),
        attributes=tuple(sorted(found)),
        sessions=() if found else tuple(sorted(sessions)),
        lineage=tuple(lineage),
        seeds=tuple(seeds),
        stores=tuple(sorted(stores)),
    )


def _names(node: Node) -> frozenset[tuple[str, str]]:
    """The (key, kept value) pairs of :data:`SCOPE_KEYS` a node names, as the writer keeps them.
    Kept on the node: a job's cases share their nodes, and every case of a conversation reads
    the same hundreds of them (the node is immutable; equality and hash ignore the entry)."""
    made: frozenset[tuple[str, str]] | None = node.__dict__.get("_scope_names")
    if made is None:
        made = frozenset(
            (key, value)
            for key in SCOPE_KEYS
            if key in node.attributes and (value := scope_value(node.attributes[key])) is not None
        )
        object.__setattr__(node, "_scope_names", made)
    return made


def _source(graph: CaseGraph, unit_id: str) -> bool:
    if graph.units[unit_id].kind != "message":  # the rule's first test, before listing readers
        return False
    # The rule asks of the readers only whether there are none or one builds the memory: when
    # one builds, its kind decides alone, and the question-time readers (every retrieval, where
    # a retrieval reads the whole store) need not be looked up.
    readers = graph.building_consumers(unit_id) or graph.consumers_of(unit_id)
    content = graph.units[unit_id].content
    return is_source_message(
        graph.units[unit_id].kind,
        [graph.operations[o].kind for o in graph.producers.get(unit_id, [])],
        [(graph.operations[o].kind, quotes(content, graph.quotable_inputs(o))) for o in readers],
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
