"""dangling_units: units known only by id, never defined by any batch."""

from __future__ import annotations

from service.audits.models import AuditInfo
from service.audits.spec import AuditSpec, columns

SPEC = AuditSpec(
    AuditInfo(
        name="dangling_units",
        description="Units known only by id (defined=false): referenced by an operation or "
        "a case but never defined by any batch.",
        parameters=[],
        columns=columns(
            ("unit", "id of the undefined unit"),
            ("consumed_by", "operations that consume it"),
            ("produced_by", "operations that produce it"),
            ("cases", "cases that name it as answer or evidence"),
        ),
    ),
    "audits/dangling_units",
)
