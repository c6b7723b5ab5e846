"""The part of a project's graph one attribution looks at, held in memory.

Built from the projected rows of ``cases/ancestors`` (what the answer depends on) and
``attribution/descendants`` (what was derived from the evidence). Both share one row shape:
``{id, kind, name, content, ts, attributes, is_operation, edges: [[type, unit_id, position]]}``.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from neo4j.time import DateTime

# Operation kinds that build the memory; everything else reads it (retrieval) or uses it.
READ_KINDS = frozenset({"retrieval", "response", "evaluation"})
ENTRY_KEYS = ("memory_id", "entry_id")


@dataclass(frozen=True)
class Node:
    id: str
    is_operation: bool
    kind: str
    name: str
    content: str
    ts: datetime | None
    entry: str | None  # memory entry this unit is a version of (attributes.memory_id/entry_id)


def _node(row: dict[str, Any]) -> Node:
    attributes = json.loads(row["attributes"]) if row.get("attributes") else {}
    entry = next((str(attributes[k]) for k in ENTRY_KEYS if attributes.get(k) is not None), None)
    ts = row.get("ts")
    return Node(
        id=row["id"],
        is_operation=bool(row["is_operation"]),
        kind=row.get("kind") or "other",
        name=row.get("name") or "",
        content=row.get("content") or "",
        ts=ts.to_native() if isinstance(ts, DateTime) else ts,
        entry=entry,
    )


@dataclass
class CaseGraph:
    """Units, operations and their ordered edges, with lookups both ways."""

    units: dict[str, Node] = field(default_factory=dict)
    operations: dict[str, Node] = field(default_factory=dict)
    inputs: dict[str, list[str]] = field(default_factory=dict)
    outputs: dict[str, list[str]] = field(default_factory=dict)
    consumers: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    producers: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))

    def add_rows(self, rows: list[dict[str, Any]]) -> None:
        """Merge projected rows; edges are indexed once every node of the rows is known."""
        new_ops = []
        for row in rows:
            node = _node(row)
            if node.is_operation:
                if node.id not in self.operations:
                    self.operations[node.id] = node
                    new_ops.append(row)
            else:
                self.units.setdefault(node.id, node)
        for row in new_ops:
            op = row["id"]
            ins = sorted((pos, uid) for kind, uid, pos in row["edges"] if kind == "CONSUMES")
            outs = sorted((pos, uid) for kind, uid, pos in row["edges"] if kind == "PRODUCES")
            self.inputs[op] = [uid for _, uid in ins]
            self.outputs[op] = [uid for _, uid in outs]
            for uid in self.inputs[op]:
                self.consumers[uid].append(op)
            for uid in self.outputs[op]:
                self.producers[uid].append(op)

    def op_time(self, op_id: str) -> datetime | None:
        return self.operations[op_id].ts

    def known_units(self, ids: list[str]) -> list[Node]:
        """The units among ``ids`` whose content the graph holds."""
        return [self.units[i] for i in ids if i in self.units]

    def ancestors_of(self, unit_id: str) -> set[str]:
        """Operation ids the unit depends on (walked in memory)."""
        seen: set[str] = set()
        stack = [unit_id]
        while stack:
            for op in self.producers.get(stack.pop(), []):
                if op not in seen:
                    seen.add(op)
                    stack.extend(self.inputs.get(op, []))
        return seen
