"""construction_loss: source messages whose content never reached any memory."""

from __future__ import annotations

from service.audits.models import AuditInfo, AuditParameter
from service.audits.spec import AuditSpec, columns

SPEC = AuditSpec(
    AuditInfo(
        name="construction_loss",
        description="Source messages whose content never reached any memory: no unit of "
        "kind memory among their descendants, however many operations away (never consumed, "
        "or consumed only by operations whose outputs lead to no memory).",
        parameters=[
            AuditParameter(
                name="preview",
                type="int",
                default=80,
                minimum=0,
                maximum=10_000,
                description="At most this many characters of each message's content.",
            )
        ],
        columns=columns(
            ("message", "id of the message unit"),
            ("preview", "the start of its content"),
            ("ts", "its timestamp"),
            ("consumed_by", "operations that consumed it, earliest first"),
            ("produced_nothing", "those of them that produced no output at all"),
            ("session", "session of its first consumer with one"),
        ),
    ),
    "audits/construction_loss",
)
