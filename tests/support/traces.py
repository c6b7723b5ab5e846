"""Small trace batches the tests build."""

from __future__ import annotations

import copy
import json
from typing import Any

from tests.support.servers import REPO

_DEMO = json.loads((REPO / "examples" / "demo_trace.json").read_text())


# The example trace's failed cases and the operation that broke each (see examples/README.md).
DEMO_TRUTH = {
    "case-1": ("ExtractionError", "op-extract-1"),
    "case-2": ("UpdateError", "op-update-2"),
    "case-3": ("DeletionError", "op-update-2"),
    "case-4": ("RetrievalError", "op-search-4"),
    "case-5": ("ResponseError", "op-answer-5"),
}


def demo_batch(project: str) -> dict[str, Any]:
    """The bundled example trace (16 operations, 6 cases), moved into ``project``."""
    batch = copy.deepcopy(_DEMO)
    batch["project"] = project
    return batch


def chain_batch(project: str, n_ops: int, prefix: str = "") -> dict[str, Any]:
    """``n_ops`` operations, each consuming the previous output: a chain of units."""
    units = [{"id": f"{prefix}u0", "kind": "message", "content": "start"}]
    ops = []
    for i in range(n_ops):
        ops.append(
            {
                "id": f"{prefix}op{i}",
                "name": "step",
                "kind": "update",
                "ts": f"2026-01-01T00:00:{i % 60:02d}Z",
                "inputs": [f"{prefix}u{i}"],
                "outputs": [{"id": f"{prefix}u{i + 1}", "kind": "memory", "content": f"v{i + 1}"}],
            }
        )
    return {"project": project, "units": units, "operations": ops, "cases": []}


def unit_json(uid: str, kind: str, content: str, **attributes: Any) -> dict[str, Any]:
    """A unit of a trace batch, with ``attributes`` when any are given (valid over HTTP too)."""
    unit: dict[str, Any] = {"id": uid, "kind": kind, "content": content}
    if attributes:
        unit["attributes"] = attributes
    return unit


def op_json(oid: str, kind: str, minute: int, ins: list[str], outs: list[str]) -> dict[str, Any]:
    """An operation of system ``mem`` at ``minute`` past midnight on 1 January 2024, named
    ``memory_system.<kind>``, consuming ``ins`` and producing ``outs``."""
    return {
        "id": oid,
        "kind": kind,
        "name": f"memory_system.{kind}",
        "system": "mem",
        "ts": f"2024-01-01T00:{minute:02d}:00Z",
        "inputs": ins,
        "outputs": outs,
    }
