"""Flatten a validated ``TraceBatch`` into the parameter rows of the ingest Cypher statements.

A batch may define the same unit twice (once in ``units`` and once inline in an operation's
inputs, say). Identical definitions collapse into one; different ones are a conflict, reported
with every offending id before anything is written.

Each definition gets a fingerprint, a hash of its canonical form. The writer compares it with the
fingerprint stored on an existing node: equal means an identical re-send (safe to retry), different
means an attempt to redefine an immutable id (409).

Timestamps travel as ISO-8601 strings and Cypher's ``datetime()`` parses them: the driver's own
encoding of a Python ``datetime`` is pure Python, ~50 us each on our 2-core machines (measured:
152 ms of CPU for 3,000), against ~1.5 us for ``isoformat()``; it was the largest cost of the
writer's Python side for a batch of 1,000 operations.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from memtrace_client.models import CaseIn, OperationIn, TraceBatch, UnitIn

from graph_schema import memory_entry, scope_names


def _attributes_json(attributes: dict[str, Any]) -> str | None:
    """Attributes as stored: canonical JSON (sorted keys), or None when there are none."""
    return json.dumps(attributes, sort_keys=True, separators=(",", ":")) if attributes else None


def fingerprint(*parts: object) -> str:
    """A stable hash of a definition's canonical parts (strings, numbers, None, lists of them)."""
    return hashlib.blake2b(repr(parts).encode(), digest_size=16).hexdigest()


@dataclass
class BatchRows:
    """Everything one batch writes, keyed by id, plus the ids it defines inconsistently."""

    project: str
    units: dict[str, dict[str, Any]] = field(default_factory=dict)
    unit_refs: set[str] = field(default_factory=set)
    operations: dict[str, dict[str, Any]] = field(default_factory=dict)
    cases: dict[str, dict[str, Any]] = field(default_factory=dict)
    conflicts: dict[str, list[str]] = field(
        default_factory=lambda: {"units": [], "operations": [], "cases": []}
    )

    @property
    def has_conflicts(self) -> bool:
        return any(self.conflicts.values())

    def referenced_only(self) -> list[str]:
        """Unit ids the batch points at without defining them."""
        return sorted(self.unit_refs - self.units.keys())


def unit_row(unit: UnitIn) -> dict[str, Any]:
    ts = unit.ts.isoformat() if unit.ts else None
    attributes = _attributes_json(unit.attributes)
    return {
        "id": unit.id,
        "kind": unit.kind,
        "content": unit.content,
        "ts": ts,
        "attributes": attributes,
        # The memory entry, as a property of its own: Cypher cannot read inside the JSON
        # attributes, and the audits find an entry's versions through the (project, memory_id)
        # index. Not in the fingerprint: it is derived from the attributes, which are.
        "memory_id": memory_entry(unit.attributes) if unit.attributes else None,
        # The scope names (conversation, user) as properties of their own, for the same reason:
        # a case's scope is found by an index seek on them (cypher/schema/*_conversation_index).
        **scope_names(unit.attributes),
        "fp": fingerprint(unit.kind, unit.content, ts, attributes),
    }


def _edges(ids: list[str]) -> list[dict[str, Any]]:
    return [{"unit": unit_id, "position": i} for i, unit_id in enumerate(ids)]


def operation_row(op: OperationIn) -> dict[str, Any]:
    attributes = _attributes_json(op.attributes)
    input_ids = [_ref_id(ref) for ref in op.inputs]
    output_ids = [_ref_id(ref) for ref in op.outputs]
    ts = op.ts.isoformat()
    return {
        "id": op.id,
        "name": op.name,
        "kind": op.kind,
        "system": op.system,
        "session_id": op.session_id,
        "ts": ts,
        "attributes": attributes,
        **scope_names(op.attributes),
        "inputs": _edges(input_ids),
        "outputs": _edges(output_ids),
        "fp": fingerprint(
            op.name, op.kind, op.system, op.session_id, ts, attributes, input_ids, output_ids
        ),
    }


def case_row(case: CaseIn) -> dict[str, Any]:
    attributes = _attributes_json(case.attributes)
    return {
        "id": case.id,
        "question": case.question,
        "expected_answer": case.expected_answer,
        "verdict": case.verdict,
        "attributes": attributes,
        "answer_unit": case.answer_unit,
        "evidence": [{"unit": u, "position": i} for i, u in enumerate(case.evidence_units)],
        "fp": fingerprint(
            case.question,
            case.expected_answer,
            case.verdict,
            attributes,
            case.answer_unit,
            case.evidence_units,
        ),
    }


def _ref_id(ref: str | UnitIn) -> str:
    return ref if isinstance(ref, str) else ref.id


def _add_unique(rows: dict[str, dict[str, Any]], row: dict[str, Any], conflicts: list[str]) -> None:
    known = rows.get(row["id"])
    if known is None:
        rows[row["id"]] = row
    elif known["fp"] != row["fp"] and row["id"] not in conflicts:
        conflicts.append(row["id"])


def batch_rows(batch: TraceBatch) -> BatchRows:
    """Flatten ``batch``; intra-batch conflicts are recorded in ``conflicts``, not raised."""
    rows = BatchRows(project=batch.project)
    for unit in batch.units:
        _add_unique(rows.units, unit_row(unit), rows.conflicts["units"])
    for op in batch.operations:
        _add_unique(rows.operations, operation_row(op), rows.conflicts["operations"])
        for ref in (*op.inputs, *op.outputs):
            if isinstance(ref, UnitIn):
                _add_unique(rows.units, unit_row(ref), rows.conflicts["units"])
                rows.unit_refs.add(ref.id)
            else:
                rows.unit_refs.add(ref)
    for case in batch.cases:
        _add_unique(rows.cases, case_row(case), rows.conflicts["cases"])
        if case.answer_unit is not None:
            rows.unit_refs.add(case.answer_unit)
        rows.unit_refs.update(case.evidence_units)
    return rows


def _text_size(row: dict[str, Any]) -> int:
    """The characters of a row's texts (content, attributes, names, ids)."""
    return sum(len(value) for value in row.values() if isinstance(value, str))


def split_rows(rows: BatchRows, max_weight: int) -> list[BatchRows]:
    """``rows`` as consecutive parts of at most ``max_weight`` each (``[rows]`` when it fits; one
    item heavier than that is a part alone), written one transaction each: a transaction's
    memory in Neo4j grows with
    what it creates, about 3 KB a node or relationship and 3 bytes a character of text (measured
    on Neo4j 5.26), so the weight of an item is its node, its relationships and one per KiB of
    its text. Operations keep their order, then cases, then units nothing names.

    Each unit is defined in the first part that names it (so a later part only references it, a
    stored id), and nothing is named before the part defining it: each part is a batch that a
    writer can write alone, after the ones before it. Conflicts are the whole batch's, checked
    before any part is written: the parts carry none."""
    parts: list[BatchRows] = []
    defined: set[str] = set()
    weight = max_weight  # a part is started on the first item

    def add(named: list[str], own: int) -> BatchRows:
        nonlocal weight
        new = [uid for uid in dict.fromkeys(named) if uid in rows.units and uid not in defined]
        item = own + sum(1 + _text_size(rows.units[uid]) // 1024 for uid in new)
        if weight + item > max_weight:
            parts.append(BatchRows(project=rows.project))
            weight = 0
        part = parts[-1]
        weight += item
        defined.update(new)
        part.units.update((uid, rows.units[uid]) for uid in new)
        part.unit_refs.update(named)
        return part

    for op_id, op in rows.operations.items():
        inputs = [edge["unit"] for edge in op["inputs"]]
        outputs = [edge["unit"] for edge in op["outputs"]]
        own = 1 + len(inputs) + 2 * len(outputs) + _text_size(op) // 1024  # PRODUCES, PRODUCED_BY
        add(inputs + outputs, own).operations[op_id] = op
    for case_id, case in rows.cases.items():
        named = [edge["unit"] for edge in case["evidence"]]
        named += [case["answer_unit"]] if case["answer_unit"] is not None else []
        add(named, 1 + len(named) + _text_size(case) // 1024).cases[case_id] = case
    for uid in rows.units:
        if uid not in defined:
            add([uid], 0)
    return parts if len(parts) > 1 else [rows]  # one part: the batch as it is
