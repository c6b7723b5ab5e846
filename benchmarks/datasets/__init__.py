"""Ground-truth-labelled evaluation datasets for the attribution engine.

- :mod:`.synthetic`: fault-injected traces of four memory-system shapes, labels true by
  construction.
- :mod:`.locomo`: traces built from real LoCoMo conversations and their recorded extraction
  output, labels derived mechanically.
- :mod:`.rewrite`: LoCoMo observations through a Mem0-like store that updates and deletes its
  memories by rule, labels by replaying the construction (built before any tuning on it).

Every generator returns :class:`LabelledBatch` objects: a ``TraceBatch``-shaped dict free of ground
truth, plus the labels of its failed cases. The generators are imported lazily, so that
``python3 -m benchmarks.datasets.locomo`` does not import its own module twice.
"""

from __future__ import annotations

import importlib
from typing import Any

from .labels import ERROR_TYPES, KINDS_FOR_ERROR, ErrorType, Label, LabelledBatch, count_labels

_LAZY = {
    "load_locomo": ".locomo",
    "load_rewrite": ".rewrite",
    "APPLICABLE_ERRORS": ".synthetic",
    "SYSTEMS": ".synthetic",
    "generate_conversation": ".synthetic",
    "generate_synthetic": ".synthetic",
}

__all__ = [
    "APPLICABLE_ERRORS",
    "ERROR_TYPES",
    "KINDS_FOR_ERROR",
    "SYSTEMS",
    "ErrorType",
    "Label",
    "LabelledBatch",
    "count_labels",
    "generate_conversation",
    "generate_synthetic",
    "load_locomo",
    "load_rewrite",
]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
