"""Convert a MemTrace execution graph (smartcomment ``ExecNetwork`` export) into a trace batch.

One JSON object per graph: ``{graph_id, created_at, metadata, data: {nodes, edges, operations,
sessions, annotations}}``, as smartcomment's ``export_graph()`` writes it and MemTraceBench ships
it. The conversion is pure and linear in the size of the file: it returns a ``TraceBatch``-shaped
dict, the benchmark's ground-truth labels kept apart from it, and warnings saying what was
skipped.

smartcomment links variables to variables and tags each edge with its operation; MemTrace links
operations to units. Per operation, with its edges in created_at order (ties in file order):

- sources that are no edge's target are its **inputs**; targets that are no edge's source its
  **outputs**;
- a variable both produced and consumed inside one operation (raw LLM response -> cleaned ->
  parsed facts; instruction -> decision -> update action; the QA context; the judge response)
  is one of its **internal steps**: kept in ``attributes.internal_steps`` with its text, not a
  unit, unless another operation uses it;
- a **deletion**: an edge from a memory entry to MemBase's ``delete_marker`` (``"DELETED"``,
  identified by content, so one marker node serves every deletion) becomes a ``tombstone`` unit of
  that entry (same ``memory_id``) produced by the operation;
- a **retrieval** records "query -> each returned memory"; the returned memories were produced
  elsewhere, so they become inputs of the search, and the search produces one ``context`` unit
  ``<op_id>:retrieved`` listing them. A question-answering operation reads that unit in place of
  the memories it names (matched by the query variable), so the search is on the answer's lineage;
- a **prediction** shared by several question-answering operations (content-addressed, e.g. two
  answers "I don't know") gets one answer unit per operation, ``<node>#<op_id>``.

Units: a node's id is ``full_node_id``; content its decoded value (``execution_graph_values``);
kind from class name and category (tables there). Only memory entries (and their tombstones)
carry ``attributes.memory_id`` (the variable's ``full_name``, shared by its versions); every unit
carries ``attributes.variable``. Sessions are kept on each operation as ``attributes.session``.

Cases come from annotations (``execution_graph_cases``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ingest.execution_graph_cases import convert_annotations
from ingest.execution_graph_ops import shape_operations
from ingest.execution_graph_state import EPOCH, GraphState, Node, Op, text
from ingest.execution_graph_values import (
    GraphValueError,
    check_nesting,
    decode_value,
    is_delete_marker,
    operation_kind,
    parse_timestamp,
    positive_version,
    unit_kind,
)
from ingest.ids import MAX_ID

__all__ = [
    "GraphValueError",
    "ImportedGraph",
    "convert_execution_graph",
    "iter_graph_files",
    "load_execution_graph",
    "operation_kind",
    "parse_timestamp",
    "unit_kind",
]

MAX_CONTENT = 1_000_000
MAX_STEP_TEXT = 4_000
MAX_EDGE_NOTES = 200


@dataclass
class ImportedGraph:
    """A converted graph: the batch to send, the held-out labels by case id, and warnings."""

    batch: dict[str, Any]
    labels: dict[str, dict[str, str]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


def load_execution_graph(path: str | Path) -> dict[str, Any]:
    """Read one graph file; a ValueError naming the path if it is not a JSON object."""
    p = Path(path)
    try:
        data = json.loads(p.read_bytes())
    except json.JSONDecodeError as e:
        raise ValueError(f"{p}: not valid JSON at line {e.lineno}: {e.msg}") from e
    except RecursionError as e:
        raise ValueError(f"{p}: nested too deeply to read") from e
    if not isinstance(data, dict):
        raise ValueError(f"{p}: an execution graph must be a JSON object")
    return data


def iter_graph_files(path: str | Path) -> Iterator[Path]:
    """The ``*.json`` files of a directory, sorted by name, or the file itself."""
    p = Path(path)
    if p.is_dir():
        yield from sorted(c for c in p.glob("*.json") if c.is_file())
    elif p.is_file():
        yield p
    else:
        raise FileNotFoundError(f"{p}: no such file or directory")


def convert_execution_graph(
    graph: Mapping[str, Any],
    project: str = "default",
    *,
    source: str | Path = "<graph>",
    id_prefix: str | None = None,
) -> ImportedGraph:
    """Convert one execution-graph object; ``source`` names it in errors and warnings.

    ``id_prefix`` (e.g. the graph id) is prepended as ``"<prefix>:"`` to every unit, operation
    and case id, for projects that hold several graphs whose node ids or query ids repeat.
    Raises ``ValueError`` (``GraphValueError`` for a bad value) naming the file and the place.
    """
    converter = Converter(graph, project, str(source), id_prefix)
    try:
        converter.read()
        cases, labels = convert_annotations(converter)
    except GraphValueError as e:
        raise GraphValueError(f"{converter.source}: {e}") from e
    batch = {
        "project": project,
        "units": converter.units(),
        "operations": [converter.operation_dict(op) for op in converter.sorted_ops()],
        "cases": cases,
    }
    return ImportedGraph(batch=batch, labels=labels, warnings=converter.warnings)


class Converter(GraphState):
    """Reads one graph into its state (``GraphState``); ``execution_graph_ops`` shapes the
    operations and ``execution_graph_cases`` builds the cases from it."""

    # -- reading -----------------------------------------------------------------------------

    def read(self) -> None:
        if not isinstance(self.graph, Mapping):
            raise self.broken("an execution graph must be a JSON object")
        check_nesting(self.graph)
        data = self.graph.get("data")
        if not isinstance(data, Mapping):
            raise self.broken("missing the 'data' object (data.nodes, data.edges, ...)")
        self.graph_id = text(self.graph.get("graph_id")) or None
        if self.graph_id is None:
            self.warn("graph_id is missing")
        self.graph_ts = parse_timestamp(self.graph.get("created_at"), "created_at")
        for raw in self.list_field(data, "sessions"):
            if text(raw.get("session_id")):
                self.sessions[text(raw.get("session_id"))] = raw
        for index, raw in enumerate(self.list_field(data, "nodes")):
            self.add_node(index, raw)
        for index, raw in enumerate(self.list_field(data, "operations")):
            self.add_operation(index, raw)
        self.attach_edges(self.list_field(data, "edges"))
        annotations = data.get("annotations")
        if annotations is None:
            self.warn("data.annotations is missing; no cases")
        elif not isinstance(annotations, list):
            raise self.broken("data.annotations must be a JSON array")
        else:
            self.annotations = annotations

    def add_node(self, index: int, raw: Mapping[str, Any]) -> None:
        place = f"data.nodes[{index}]"
        class_name = text(raw.get("class_name"))
        name = text(raw.get("name"))
        version = positive_version(raw.get("version"), f"{place}.version")
        raw_id = text(raw.get("full_node_id"))
        var = text(raw.get("full_name")) or (f"{class_name}:{name}" if class_name else name)
        if not raw_id:
            if not (var and version is not None):
                self.warn(f"node {index}: no full_node_id and no name/version; skipped")
                return
            raw_id = f"{var}@{version}"
        if not var:
            var = raw_id.rsplit("@", 1)[0]
        if raw_id in self.nodes:
            self.warn(f"node {index}: duplicate id {raw_id!r}; kept the first")
            return
        content, parsed = decode_value(raw.get("value"))
        if len(content) > MAX_CONTENT:
            self.warn(f"node {raw_id!r}: value truncated to {MAX_CONTENT} characters")
            content = content[:MAX_CONTENT]
        category = text(raw.get("category"))
        if not category:
            self.warn(f"node {raw_id!r}: category is missing")
        ts = parse_timestamp(raw.get("created_at"), f"{place}.created_at")
        if ts is None:
            self.warn(f"node {raw_id!r}: created_at is missing or unreadable")
        node = Node(
            raw_id=raw_id,
            id=self.make_id(raw_id),
            var=var,
            name=name or var,
            class_name=class_name,
            category=category,
            version=version or 1,
            content=content,
            parsed=parsed,
            kind=unit_kind(category, class_name, content),
            ts=ts,
            raw=raw,
            marker=is_delete_marker(class_name, category, content),
        )
        self.nodes[raw_id] = node
        self.by_wire[node.id] = node
        for key in (var, text(raw.get("node_id")) or f"{node.name}@{node.version}", node.name):
            best = self.latest.get(key)
            if best is None or node.version >= best.version:
                self.latest[key] = node

    def add_operation(self, index: int, raw: Mapping[str, Any]) -> None:
        raw_id = text(raw.get("op_id"))
        if not raw_id:
            self.warn(f"operation {index}: op_id is missing; skipped (its edges are dropped)")
            return
        if raw_id in self.ops:
            self.warn(f"operation {raw_id!r}: duplicate op_id; kept the first")
            return
        name = text(raw.get("op_name"))
        if not name:
            self.warn(f"operation {raw_id!r}: op_name is missing; named after its id")
            name = raw_id
        category = text(raw.get("category"))
        if not category:
            self.warn(f"operation {raw_id!r}: category is missing")
        elif category == "sentinel":
            self.warn(
                f"operation {raw_id!r}: smartcomment's sentinel for edges recorded outside any "
                "operation; imported as kind 'other'"
            )
        self.ops[raw_id] = Op(
            raw_id=raw_id,
            id=self.make_id(raw_id),
            name=name[:MAX_ID],
            category=category,
            kind=operation_kind(category, name),
            ts=parse_timestamp(raw.get("created_at"), f"data.operations[{index}].created_at"),
            raw=raw,
        )

    def attach_edges(self, raw_edges: list[Mapping[str, Any]]) -> None:
        """Group edges by operation, then shape each operation (linear: dicts and sets only)."""

        for index, edge in enumerate(raw_edges):
            op_id = text(edge.get("op_id"))
            src = text(edge.get("source_full_node_id"))
            dst = text(edge.get("target_full_node_id"))
            label = text(edge.get("edge_id")) or f"#{index}"
            if not (src and dst):
                self.warn(f"edge {label}: source or target missing; skipped")
                continue
            op = self.ops.get(op_id)
            if op is None:
                self.warn(f"edge {label}: unknown op_id {op_id!r}; skipped")
                continue
            for end in (src, dst):
                if end not in self.nodes:
                    self.warn(
                        f"edge {label}: node {end!r} is not in data.nodes; kept as a reference"
                    )
            ts = parse_timestamp(edge.get("created_at"), f"data.edges[{index}].created_at")
            # Ties keep the file's order: smartcomment appends edges as the code records them.
            op.edges.append(((ts is None, ts or EPOCH, index), edge))
        shape_operations(self)

    # -- writing -----------------------------------------------------------------------------

    def units(self) -> list[dict[str, Any]]:
        """Every node some operation reads or writes as a whole, every node no edge names,
        and the units the conversion derived (tombstones, retrieval results, answer copies)."""
        mentioned = self.mentioned
        out = []
        for node in self.nodes.values():
            internal = node.raw_id in mentioned and node.raw_id not in self.pure_use
            if node.marker or internal or node.raw_id in self.copied:
                continue
            out.append(self.unit_dict(node))
        return out + self.extra_units

    def operation_dict(self, op: Op) -> dict[str, Any]:
        attributes: dict[str, Any] = {}
        for key in ("category", "comment", "metadata"):
            if op.raw.get(key) not in (None, "", {}):
                attributes[key] = op.raw[key]
        session = self.sessions.get(text(op.raw.get("session_id")))
        if session is not None and (
            kept := {
                k: session[k]
                for k in ("session_name", "category", "comment", "metadata", "created_at")
                if session.get(k) not in (None, "", {})
            }
        ):
            attributes["session"] = kept
        if op.steps:
            attributes["internal_steps"] = [self.step_dict(raw) for raw in op.steps]
        notes = [self.edge_note(e) for _, e in op.edges if e.get("category") or e.get("comment")]
        if notes:
            attributes["edges"] = notes[:MAX_EDGE_NOTES]
            if len(notes) > MAX_EDGE_NOTES:
                attributes["edges_omitted"] = len(notes) - MAX_EDGE_NOTES
        result: dict[str, Any] = {
            "id": op.id,
            "name": op.name,
            "kind": op.kind,
            "ts": (op.ts or EPOCH).isoformat(),
            "inputs": list(op.inputs),
            "outputs": list(op.outputs),
            "attributes": attributes,
        }
        if op.raw.get("session_id") not in (None, ""):
            result["session_id"] = text(op.raw["session_id"])[:MAX_ID]
        return result

    def step_dict(self, raw_id: str) -> dict[str, Any]:
        node = self.nodes.get(raw_id)
        if node is None:
            return {"id": self.make_id(raw_id)}
        step = {"id": node.id, "kind": node.kind, "category": node.category}
        if node.class_name:
            step["class_name"] = node.class_name
        step["content"] = node.content[:MAX_STEP_TEXT]
        return step

    def edge_note(self, edge: Mapping[str, Any]) -> dict[str, Any]:
        pairs = (
            ("edge_id", edge.get("edge_id")),
            ("source", self.unit_ref(text(edge.get("source_full_node_id")))),
            ("target", self.unit_ref(text(edge.get("target_full_node_id")))),
            ("category", edge.get("category")),
            ("comment", edge.get("comment")),
        )
        return {k: v for k, v in pairs if v not in (None, "")}
