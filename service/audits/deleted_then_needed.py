"""deleted_then_needed: memory entries deleted before a failed case that needed them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from service.audits.models import AuditInfo
from service.audits.models import AuditRow as Row
from service.audits.spec import COVERAGE, AuditSpec, columns
from service.audits.words import carried, public


def versions_carry_answer(row: Row, params: Mapping[str, Any]) -> Row | None:
    """Keep the entry's versions that carry the expected answer, and the
    row when one is left."""
    expected = row["_expected_answer"] or ""
    versions: list[str] = []
    words: list[str] = []
    for version in row["_versions"]:
        shared = carried(expected, [version["content"] or ""], params["min_answer_coverage"])
        if shared is not None:
            versions.append(version["id"])
            words += [w for w in shared if w not in words]
    if not versions:
        return None
    return {**public(row), "versions": versions, "answer_words": words}


SPEC = AuditSpec(
    AuditInfo(
        name="deleted_then_needed",
        description="Memory entries deleted before a failed case that needed them: a "
        "version of the entry descends from the case's evidence units (within 10 operation "
        "steps) and carries the expected answer (min_answer_coverage), and a tombstone of "
        "the entry was produced, or a deletion operation consumed one of its versions, at "
        "or after that version was produced and before the case's answer.",
        parameters=[COVERAGE],
        columns=columns(
            ("case", "the failed case"),
            ("memory_id", "the deleted memory entry"),
            ("versions", "its versions that descend from the evidence and carry answer words"),
            ("deleted_version", "the version the deleting operation consumed, if any"),
            ("deletion", "id of the deleting operation"),
            ("deletion_kind", "its kind"),
            ("deleted_at", "its time"),
            ("answered_at", "time of the case's answer"),
            ("evidence", "the case's evidence units the versions descend from"),
            ("answer_words", "words of the expected answer the versions carry"),
        ),
    ),
    "audits/deleted_then_needed",
    versions_carry_answer,
    answer_needles=True,
    cursor_paged=True,
)
