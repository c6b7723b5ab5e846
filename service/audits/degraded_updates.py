"""degraded_updates: updates whose new version of a memory lost content words of the old one."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from service.audits.models import AuditInfo, AuditParameter
from service.audits.models import AuditRow as Row
from service.audits.spec import AuditSpec, columns
from service.audits.words import public, words_missing


def lost_words(row: Row, params: Mapping[str, Any]) -> Row | None:
    """Keep an update whose new version lacks ``min_lost_words`` words or more
    of the old version's content."""
    lost = words_missing(row["_old_content"] or "", row["_new_content"] or "")
    if len(lost) < params["min_lost_words"]:
        return None
    return {**public(row), "lost_words": lost}


SPEC = AuditSpec(
    AuditInfo(
        name="degraded_updates",
        description="Updates that lost content: an operation consumed a version of a memory "
        "and produced its next version (the same entry, by memory_id; for a memory without "
        "one, the only output of an update operation, also without one) lacking at least "
        "min_lost_words content words of the old version.",
        parameters=[
            AuditParameter(
                name="min_lost_words",
                type="int",
                default=1,
                minimum=1,
                maximum=1_000_000,  # a unit holds at most 1,000,000 characters
                description="Report an update only when the new version lacks at least "
                "this many content words of the old one.",
            )
        ],
        columns=columns(
            ("memory_id", "the memory entry (null for a memory without one)"),
            ("old_version", "the version the operation consumed"),
            ("new_version", "the version it produced"),
            ("operation", "id of the updating operation"),
            ("operation_name", "its name"),
            ("ts", "its time"),
            ("lost_words", "content words of the old version missing from the new one"),
        ),
    ),
    "audits/degraded_updates",
    lost_words,
)
