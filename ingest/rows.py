"""Flatten a validated ``TraceBatch`` into the parameter rows of the ingest Cypher statements.

A batch may define the same unit twice (once in ``units`` and once inline in an operation's
inputs, say). Identical definitions collapse into one; different ones are a conflict, reported
with every offending id before anything is written.

Each definition gets a fingerprint, a hash of its canonical JSON. The writer compares it with the
fingerprint stored on an existing node: equal means an identical re-send (safe to retry), different
means an attempt to redefine an immutable id (409).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from graph_schema.models import CaseIn, OperationIn, TraceBatch, UnitIn


def fingerprint(payload: dict[str, Any]) -> str:
    """A stable hash of a definition: key order and JSON spacing do not matter."""
    canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"), default=_json_default)
    return hashlib.blake2b(canonical.encode(), digest_size=16).hexdigest()


def _json_default(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def _attributes_json(attributes: dict[str, Any]) -> str | None:
    return json.dumps(attributes, sort_keys=True, separators=(",", ":")) if attributes else None


@dataclass
class BatchRows:
    """Everything one batch writes, keyed by id, plus ids it defines inconsistently."""

    project: str
    units: dict[str, dict[str, Any]] = field(default_factory=dict)
    unit_refs: set[str] = field(default_factory=set)
    operations: dict[str, dict[str, Any]] = field(default_factory=dict)
    consumes: list[dict[str, Any]] = field(default_factory=list)
    produces: list[dict[str, Any]] = field(default_factory=list)
    cases: dict[str, dict[str, Any]] = field(default_factory=dict)
    case_answers: list[dict[str, Any]] = field(default_factory=list)
    case_evidence: list[dict[str, Any]] = field(default_factory=list)
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
    definition = {
        "kind": unit.kind,
        "content": unit.content,
        "ts": unit.ts,
        "attributes": unit.attributes,
    }
    return {
        "id": unit.id,
        "kind": unit.kind,
        "content": unit.content,
        "ts": unit.ts,
        "attributes": _attributes_json(unit.attributes),
        "fp": fingerprint(definition),
    }


def operation_row(op: OperationIn) -> dict[str, Any]:
    definition = {
        "name": op.name,
        "kind": op.kind,
        "system": op.system,
        "session_id": op.session_id,
        "ts": op.ts,
        "attributes": op.attributes,
        "inputs": [_ref_id(ref) for ref in op.inputs],
        "outputs": [_ref_id(ref) for ref in op.outputs],
    }
    return {
        "id": op.id,
        "name": op.name,
        "kind": op.kind,
        "system": op.system,
        "session_id": op.session_id,
        "ts": op.ts,
        "attributes": _attributes_json(op.attributes),
        "fp": fingerprint(definition),
    }


def case_row(case: CaseIn) -> dict[str, Any]:
    definition = case.model_dump(exclude={"id"})
    return {
        "id": case.id,
        "question": case.question,
        "expected_answer": case.expected_answer,
        "verdict": case.verdict,
        "attributes": _attributes_json(case.attributes),
        "fp": fingerprint(definition),
    }


def _ref_id(ref: str | UnitIn) -> str:
    return ref if isinstance(ref, str) else ref.id


def _add_unique(rows: dict[str, dict[str, Any]], row: dict[str, Any], conflicts: list[str]) -> bool:
    """Add ``row`` unless its id is taken; True when it was new."""
    known = rows.get(row["id"])
    if known is None:
        rows[row["id"]] = row
        return True
    if known["fp"] != row["fp"] and row["id"] not in conflicts:
        conflicts.append(row["id"])
    return False


def batch_rows(batch: TraceBatch) -> BatchRows:
    """Flatten ``batch``; intra-batch conflicts are recorded in ``conflicts``, not raised."""
    rows = BatchRows(project=batch.project)
    for unit in batch.units:
        _add_unique(rows.units, unit_row(unit), rows.conflicts["units"])

    for op in batch.operations:
        if not _add_unique(rows.operations, operation_row(op), rows.conflicts["operations"]):
            continue  # a repeated definition: its edges are already listed
        for edges, refs in ((rows.consumes, op.inputs), (rows.produces, op.outputs)):
            for position, ref in enumerate(refs):
                if isinstance(ref, UnitIn):
                    _add_unique(rows.units, unit_row(ref), rows.conflicts["units"])
                unit_id = _ref_id(ref)
                rows.unit_refs.add(unit_id)
                edges.append({"op": op.id, "unit": unit_id, "position": position})

    for case in batch.cases:
        if not _add_unique(rows.cases, case_row(case), rows.conflicts["cases"]):
            continue
        if case.answer_unit is not None:
            rows.unit_refs.add(case.answer_unit)
            rows.case_answers.append({"case": case.id, "unit": case.answer_unit})
        for position, unit_id in enumerate(case.evidence_units):
            rows.unit_refs.add(unit_id)
            rows.case_evidence.append({"case": case.id, "unit": unit_id, "position": position})
    return rows
