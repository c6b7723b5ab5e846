"""idle_operations: operations with no inputs or no outputs."""

from __future__ import annotations

import typing

from graph_schema import OperationKind
from service.audits.models import AuditInfo, AuditParameter
from service.audits.spec import AuditSpec, columns

SPEC = AuditSpec(
    AuditInfo(
        name="idle_operations",
        description="Operations with no inputs or no outputs; `missing` says which.",
        parameters=[
            AuditParameter(
                name="kind",
                type="string",
                default=None,
                choices=list(typing.get_args(OperationKind)),
                description="Only operations of this kind (every kind when not given).",
            )
        ],
        columns=columns(
            ("operation", "id of the operation"),
            ("name", "its name"),
            ("kind", "its kind"),
            ("session", "its session"),
            ("ts", "its time"),
            ("missing", "'inputs', 'outputs' or 'inputs and outputs'"),
        ),
    ),
    "audits/idle_operations",
)
