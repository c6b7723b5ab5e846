"""The state one execution-graph conversion shares across its steps, at the bottom of the
converter's modules: ``execution_graph`` (reading nodes, operations and edges),
``execution_graph_ops`` (shaping operations) and ``execution_graph_cases`` (cases from
annotations) each import it, and none imports another's internals back (no import circle).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from ingest.ids import MAX_ID, bounded_id

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def text(value: object) -> str:
    """A field as text; strings are returned as they are (no copy)."""
    if isinstance(value, str):
        return value
    return "" if value is None else str(value)


@dataclass
class Node:
    raw_id: str
    id: str
    var: str  # smartcomment's full_name: "<class_name>:<name>", or the name
    name: str
    class_name: str
    category: str
    version: int
    content: str
    parsed: Any
    kind: str
    ts: datetime | None
    raw: Mapping[str, Any]
    marker: bool = False


@dataclass
class Op:
    raw_id: str
    id: str
    name: str
    category: str
    kind: str
    ts: datetime | None
    raw: Mapping[str, Any]
    edges: list[tuple[tuple[bool, datetime, int], Mapping[str, Any]]] = field(default_factory=list)
    inputs: dict[str, None] = field(default_factory=dict)  # wire ids, ordered
    outputs: dict[str, None] = field(default_factory=dict)
    steps: list[str] = field(default_factory=list)  # raw ids of internal steps
    query_vars: set[str] = field(default_factory=set)
    retrieved: list[str] = field(default_factory=list)  # raw ids of returned memories
    results_unit: str | None = None


class GraphState:
    """One graph's conversion: its indexes, the units it derived, its warnings. The steps
    (``execution_graph.Converter``, ``execution_graph_ops``, ``execution_graph_cases``) read
    and fill it."""

    def __init__(
        self, graph: Mapping[str, Any], project: str, source: str, id_prefix: str | None
    ) -> None:
        self.graph = graph
        self.project = project
        self.source = source
        self.prefix = f"{id_prefix}:" if id_prefix else ""
        self.warnings: list[str] = []
        self.nodes: dict[str, Node] = {}
        self.latest: dict[str, Node] = {}  # by variable (full_name) and by node_id/name
        self.ops: dict[str, Op] = {}
        self.sessions: dict[str, dict[str, Any]] = {}
        self.extra_units: list[dict[str, Any]] = []
        self.pure_use: set[str] = set()  # nodes some operation reads or writes as a whole
        self.consumers: dict[str, list[Op]] = {}  # raw node id -> ops reading it as an input
        self.annotations: list[Any] = []
        self.by_wire: dict[str, Node] = {}
        self.mentioned: set[str] = set()  # nodes some edge names
        self.derived_ids: set[str] = set()
        self.copied: set[str] = set()  # predictions replaced by one copy per answer operation
        self.graph_id: str | None = None
        self.graph_ts: datetime | None = None

    # -- helpers -----------------------------------------------------------------------------

    def warn(self, message: str) -> None:
        self.warnings.append(f"{self.source}: {message}")

    def broken(self, message: str) -> ValueError:
        return ValueError(f"{self.source}: {message}")

    def make_id(self, raw: str) -> str:
        """A wire id: prefixed, and shortened with a hash suffix when over 256 characters."""
        full = self.prefix + raw
        short = bounded_id(full)
        if short != full:
            self.warn(f"id {raw[:60]!r}... is longer than {MAX_ID} characters, shortened")
        return short

    def unit_ref(self, raw: str) -> str:
        node = self.nodes.get(raw)
        return node.id if node else self.make_id(raw)

    def list_field(self, data: Mapping[str, Any], key: str) -> list[Any]:
        value = data.get(key)
        if value is None:
            self.warn(f"data.{key} is missing; treated as empty")
            return []
        if not isinstance(value, list):
            raise self.broken(f"data.{key} must be a JSON array, not {type(value).__name__}")
        for index, item in enumerate(value):
            if not isinstance(item, dict):
                raise self.broken(f"data.{key}[{index}] must be a JSON object")
        return value

    def sorted_ops(self) -> list[Op]:
        return sorted(self.ops.values(), key=lambda o: (o.ts or EPOCH, o.raw_id))

    def unit_dict(self, node: Node, unit_id: str | None = None) -> dict[str, Any]:
        raw = node.raw
        attributes: dict[str, Any] = {"variable": node.var}
        if node.kind in ("memory", "tombstone"):
            attributes["memory_id"] = node.var
        for key in ("name", "version", "class_name", "category", "comment", "session_id"):
            if raw.get(key) not in (None, ""):
                attributes[key] = raw[key]
        if raw.get("metadata"):
            attributes["metadata"] = raw["metadata"]
        unit: dict[str, Any] = {
            "id": unit_id or node.id,
            "kind": node.kind,
            "content": node.content,
        }
        if node.ts is not None:
            unit["ts"] = node.ts.isoformat()
        unit["attributes"] = attributes
        return unit
