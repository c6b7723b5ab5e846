"""The audits MemTrace knows: one module of ``service.audits`` and one
``cypher/audits/<name>.cypher`` file per audit, and back (a test checks they match one to one).

Every audit also takes ``project``, ``skip`` and ``limit``; those are not listed per audit.
"""

from __future__ import annotations

from service.audits import (
    construction_loss,
    dangling_units,
    degraded_updates,
    deleted_then_needed,
    idle_operations,
    retrieval_misses,
)
from service.audits.spec import AuditSpec

_SPECS = (
    construction_loss.SPEC,
    degraded_updates.SPEC,
    deleted_then_needed.SPEC,
    retrieval_misses.SPEC,
    dangling_units.SPEC,
    idle_operations.SPEC,
)

AUDITS: dict[str, AuditSpec] = {spec.name: spec for spec in _SPECS}
