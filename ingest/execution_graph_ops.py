"""Shaping smartcomment's variable-to-variable edges into MemTrace operations.

See ``ingest.execution_graph`` for the rules (inputs, outputs, internal steps, deletions,
retrievals, question answering). Every step is linear in the number of edges: membership is
tested in dicts and sets, never in lists.
"""

from __future__ import annotations

import json
from typing import Any

from ingest.execution_graph_state import EPOCH, GraphState, Node, Op, text


def shape_operations(conv: GraphState) -> None:
    """Fill every operation's inputs, outputs and internal steps, and derive the extra units."""

    sources: dict[str, dict[str, None]] = {}  # op -> its edges' sources / targets, ordered
    targets: dict[str, dict[str, None]] = {}
    producers: dict[str, set[str]] = {}  # node -> ops that write it
    mentioned: set[str] = set()
    for op in conv.ops.values():
        op.edges.sort(key=lambda item: item[0])
        srcs: dict[str, None] = {}
        dsts: dict[str, None] = {}
        for _, edge in op.edges:
            srcs.setdefault(text(edge.get("source_full_node_id")))
            dsts.setdefault(text(edge.get("target_full_node_id")))
        sources[op.raw_id], targets[op.raw_id] = srcs, dsts
        for raw in dsts:
            producers.setdefault(raw, set()).add(op.raw_id)
        mentioned.update(srcs)
        mentioned.update(dsts)
        if op.ts is None:
            first = op.edges[0][0] if op.edges else None
            op.ts = first[1] if first and not first[0] else conv.graph_ts
            used = "its earliest edge" if first and not first[0] else "the graph's created_at"
            if op.ts is None:
                op.ts, used = EPOCH, "1970-01-01 UTC"
            conv.warn(f"operation {op.raw_id!r}: created_at is missing or unreadable; using {used}")
    conv.mentioned = mentioned

    # A variable read or written as a whole by some operation is a unit; one only passed
    # along inside a single operation is that operation's internal step. Memory entries are
    # always units: a version written and rewritten within one operation is still a state of
    # the store.
    conv.pure_use.update(raw for raw in mentioned if _is_entry(conv, raw))
    for op in conv.ops.values():
        srcs, dsts = sources[op.raw_id], targets[op.raw_id]
        for raw in srcs:
            if raw not in dsts:
                conv.pure_use.add(raw)
        for raw in dsts:
            if raw not in srcs:
                conv.pure_use.add(raw)

    for op in conv.ops.values():
        srcs, dsts = sources[op.raw_id], targets[op.raw_id]
        deleted = _deletions(conv, op)
        for raw in srcs:
            node = conv.nodes.get(raw)
            if node is not None and node.marker:
                conv.warn(f"operation {op.raw_id!r} reads the deletion marker {raw!r}; ignored")
                continue
            if raw not in dsts:
                op.inputs.setdefault(conv.unit_ref(raw))
                if node is not None and node.kind == "query":
                    op.query_vars.add(node.var)
        for raw in dsts:
            node = conv.nodes.get(raw)
            if node is not None and node.marker:
                for tombstone in deleted.get(raw, []):
                    op.outputs.setdefault(tombstone)
                continue
            if raw in srcs:
                if raw in conv.pure_use:
                    op.outputs.setdefault(conv.unit_ref(raw))
                else:
                    op.steps.append(raw)
                continue
            if op.kind == "retrieval" and _returned(conv, op, raw, producers):
                op.retrieved.append(raw)
                continue
            op.outputs.setdefault(conv.unit_ref(raw))
        if op.retrieved:
            _retrieval_results(conv, op)
    _answers_read_retrievals(conv)
    _answer_per_operation(conv, producers)
    for op in conv.ops.values():
        for unit_id in op.inputs:
            conv.consumers.setdefault(unit_id, []).append(op)


def _is_entry(conv: GraphState, raw: str) -> bool:
    node = conv.nodes.get(raw)
    return node is not None and node.kind in ("memory", "tombstone")


def _deletions(conv: GraphState, op: Op) -> dict[str, list[str]]:
    """Tombstones for the entries this operation linked to a deletion marker, by marker id."""

    found: dict[str, list[str]] = {}
    for (_, ts, _), edge in op.edges:
        marker = conv.nodes.get(text(edge.get("target_full_node_id")))
        if marker is None or not marker.marker:
            continue
        src_raw = text(edge.get("source_full_node_id"))
        entry = conv.nodes.get(src_raw)
        var = entry.var if entry else src_raw.rsplit("@", 1)[0]
        unit_id = conv.make_id(f"{src_raw}#deleted")
        if unit_id in conv.derived_ids:  # the same version deleted twice
            unit_id = conv.make_id(f"{src_raw}#deleted-by-{op.raw_id}")
        conv.derived_ids.add(unit_id)
        conv.extra_units.append(
            {
                "id": unit_id,
                "kind": "tombstone",
                "content": marker.content,
                "ts": (marker.ts if marker.ts and not edge.get("created_at") else ts).isoformat(),
                "attributes": {
                    "memory_id": var,
                    "variable": var,
                    "deletes": conv.unit_ref(src_raw),
                    "marker": marker.raw_id,
                },
            }
        )
        found.setdefault(marker.raw_id, []).append(unit_id)
    return found


def _returned(conv: GraphState, op: Op, raw: str, producers: dict[str, set[str]]) -> bool:
    """Whether a target of a retrieval is a memory it returned (written elsewhere), rather
    than something the retrieval made."""
    node = conv.nodes.get(raw)
    if node is not None and node.kind == "memory":
        return True
    return any(
        other != op.raw_id and conv.ops[other].kind != "retrieval"
        for other in producers.get(raw, ())
    )


def _retrieval_results(conv: GraphState, op: Op) -> None:
    """The returned memories become the search's inputs; it produces one list of them."""
    items: list[Any] = []
    for raw in op.retrieved:
        op.inputs.setdefault(conv.unit_ref(raw))
        node = conv.nodes.get(raw)
        items.append(_item(node) if node is not None else raw)
    unit_id = conv.make_id(f"{op.raw_id}:retrieved")
    conv.extra_units.append(
        {
            "id": unit_id,
            "kind": "context",
            "content": json.dumps(items, ensure_ascii=False, indent=2, default=str),
            "ts": op.ts.isoformat() if op.ts else None,
            "attributes": {"retrieved": [conv.unit_ref(r) for r in op.retrieved]},
        }
    )
    if conv.extra_units[-1]["ts"] is None:
        del conv.extra_units[-1]["ts"]
    op.results_unit = unit_id
    op.outputs.setdefault(unit_id)


def _item(node: Node) -> Any:
    return node.parsed if isinstance(node.parsed, dict | list) else node.content


def _answers_read_retrievals(conv: GraphState) -> None:
    """A question-answering operation reads the list its query's search returned in place of
    the memories it names, so that the search is on the answer's lineage."""
    searches: dict[str, list[Op]] = {}
    for op in conv.sorted_ops():
        if op.results_unit:
            for var in op.query_vars:
                searches.setdefault(var, []).append(op)
    for op in conv.ops.values():
        if op.kind != "response" or not op.query_vars:
            continue
        memories = {
            uid: node.var
            for uid in op.inputs
            if (node := _node_by_wire(conv, uid)) is not None and node.kind == "memory"
        }
        if not memories:
            continue
        candidates = [s for var in op.query_vars for s in searches.get(var, [])]
        if not candidates:
            continue
        wanted = set(memories.values())

        def returned_vars(search: Op) -> set[str]:
            return {conv.nodes[r].var for r in search.retrieved if r in conv.nodes}

        covering = [s for s in candidates if wanted <= returned_vars(s)]
        search = (covering or candidates)[-1]
        have = returned_vars(search)
        rebuilt: dict[str, None] = {}
        for uid in op.inputs:
            if uid in memories and memories[uid] in have:
                rebuilt.setdefault(search.results_unit or uid)
            else:
                rebuilt.setdefault(uid)
        op.inputs = rebuilt


def _node_by_wire(conv: GraphState, unit_id: str) -> Node | None:
    return conv.by_wire.get(unit_id)


def _answer_per_operation(conv: GraphState, producers: dict[str, set[str]]) -> None:
    """A prediction written by several question-answering operations gets one unit each;
    a judge reads the copy of the answer operation for its own query."""
    copies: dict[tuple[str, str], str] = {}
    for op in conv.ops.values():
        if op.kind != "response":
            continue
        rebuilt: dict[str, None] = {}
        for uid in op.outputs:
            node = _node_by_wire(conv, uid)
            shared = (
                node is not None
                and node.kind == "answer"
                and len(
                    [p for p in producers.get(node.raw_id, ()) if conv.ops[p].kind == "response"]
                )
                > 1
            )
            if node is None or not shared:
                rebuilt.setdefault(uid)
                continue
            copy_id = conv.make_id(f"{node.raw_id}#{op.raw_id}")
            conv.extra_units.append(conv.unit_dict(node, copy_id))
            conv.extra_units[-1]["attributes"]["copy_of"] = node.id
            conv.by_wire[copy_id] = node
            for var in op.query_vars:
                copies[(node.raw_id, var)] = copy_id
            rebuilt.setdefault(copy_id)
            conv.copied.add(node.raw_id)
        op.outputs = rebuilt
    if not copies:
        return
    for op in conv.ops.values():
        if op.kind == "response":
            continue
        rebuilt = {}
        for uid in op.inputs:
            node = _node_by_wire(conv, uid)
            copy = next(
                (
                    copies[(node.raw_id, v)]
                    for v in op.query_vars
                    if node and (node.raw_id, v) in copies
                ),
                None,
            )
            rebuilt.setdefault(copy or uid)
        op.inputs = rebuilt
