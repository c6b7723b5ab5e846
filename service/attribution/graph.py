"""The part of a project's graph one attribution looks at, held in memory.

Built from typed reads only: a :class:`NodeRead` (a unit or an operation, with an operation's
input and output unit ids in position order) for what the answer depends on and what derives
from the evidence, and a :class:`Node` for each message of the case's scope. The repository
decodes Neo4j's projected rows into them (``service.attribution.rows``), once per job: a read is
immutable, so every case's graph of a job shares it, and no graph decodes, copies or changes
one.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from graph_schema.rules import QUESTION_TIME_KINDS, QUOTED_KINDS

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


@dataclass(frozen=True, slots=True)
class NodeRead:
    """A unit or an operation as the repository read it: its node and, for an operation, the
    ids of the units it consumed (``inputs``) and produced (``outputs``), each in position order
    (a unit has neither). Immutable: a job's cases share one read of each node."""

    node: Node
    inputs: tuple[str, ...] = ()
    outputs: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ScopeMessage:
    """A message of a scope (``attribution/scope_messages``): its node, whose ``ts`` is when it
    was recorded, and that instant exactly (``rows.nanoseconds``), which a job's shared read of
    the scope compares with each case's answer time (``scope_reads``)."""

    node: Node
    recorded: int | None


@dataclass(frozen=True)
class ScopeRead:
    """A scope's messages, and whether a limit cut them (reported as ``searched.scope_cut``)."""

    messages: list[ScopeMessage]
    cut: bool = False
    scope: str | None = None  # how the scope was found, when not as the Scope was named

    @property
    def nodes(self) -> list[Node]:
        return [m.node for m in self.messages]


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
    inputs: dict[str, tuple[str, ...]] = field(default_factory=dict)
    outputs: dict[str, tuple[str, ...]] = field(default_factory=dict)
    producers: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    _building: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    _reading: list[str] = field(default_factory=list)  # READ_KINDS operations, as added
    _reading_inputs: dict[str, frozenset[str]] = field(default_factory=dict)
    _consumers: dict[str, list[str]] = field(default_factory=dict)  # consumers_of, as asked
    _ancestors: dict[str, frozenset[str]] = field(default_factory=dict)  # ancestors_of, as asked
    _quotable: dict[str, tuple[tuple[str, str], ...]] = field(default_factory=dict)  # as asked

    def add(self, reads: Iterable[NodeRead]) -> None:
        """Merge units and operations; edges are indexed once every node of ``reads`` is known.
        A node already known stays as it is (the first read of it is kept)."""
        new_ops = []
        for read in reads:
            node = read.node
            if node.is_operation:
                if node.id not in self.operations:
                    self.operations[node.id] = node
                    new_ops.append(read)
            else:
                self.units.setdefault(node.id, node)
        if new_ops:  # an operation added may read or make any unit: asked again, found anew
            self._consumers.clear()
            self._ancestors.clear()
            self._quotable.clear()
        for read in new_ops:
            op = read.node.id
            ins = self.inputs[op] = read.inputs
            outs = self.outputs[op] = read.outputs
            if read.node.kind in READ_KINDS:
                self._reading.append(op)
            else:
                for uid in ins:
                    self._building[uid].append(op)
            for uid in outs:
                self.producers[uid].append(op)

    def add_units(self, units: Iterable[Node]) -> None:
        """Merge units read without their operations (a scope's messages): they add no edge."""
        for node in units:
            self.units.setdefault(node.id, node)

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

    def quotable_inputs(self, op: str) -> tuple[tuple[str, str], ...]:
        """(kind, content) of the inputs of ``op`` that a prompt it read could quote
        (``graph_schema.rules.quotes``): its contexts and answers. Kept per operation: where
        the answer's lineage holds a whole conversation, every message asks of its reader."""
        made = self._quotable.get(op)
        if made is None:
            known = (self.units.get(u) for u in self.inputs.get(op, ()))
            made = self._quotable[op] = tuple(
                (n.kind, n.content) for n in known if n is not None and n.kind in QUOTED_KINDS
            )
        return made

    def _inputs_of(self, op: str) -> frozenset[str]:
        made = self._reading_inputs.get(op)
        if made is None:
            made = self._reading_inputs[op] = frozenset(self.inputs[op])
        return made

    def op_time(self, op_id: str) -> datetime | None:
        return self.operations[op_id].ts

    def known_units(self, ids: Iterable[str]) -> list[Node]:
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
