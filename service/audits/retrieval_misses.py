"""retrieval_misses: failed cases whose answer was in a live memory the context left out."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from service.audits.models import AuditInfo
from service.audits.models import AuditRow as Row
from service.audits.spec import COVERAGE, AuditSpec, columns
from service.audits.words import carried, content_words, public


def memory_carries_answer(row: Row, params: Mapping[str, Any]) -> Row | None:
    """Keep a memory that carries the expected answer while the contexts of
    the answer's lineage do not (then the retrieval did deliver it: a response fault)."""
    percent = params["min_answer_coverage"]
    expected = row["_expected_answer"] or ""
    words = carried(expected, [row["_content"] or ""], percent)
    if words is None:
        return None
    if percent and content_words(expected) and carried(expected, row["_texts"], percent):
        return None
    return {**public(row), "answer_words": words}


SPEC = AuditSpec(
    AuditInfo(
        name="retrieval_misses",
        description="Failed cases whose answer was held by a memory live at question "
        "time that the answer's context lacks: the memory descends from the case's "
        "evidence, carries the expected answer (min_answer_coverage), was produced before "
        "the answer and not superseded or tombstoned before it; no retrieval output of the "
        "answer's lineage holds its text, and those outputs do not carry the answer either "
        "(that would be a response fault).",
        parameters=[COVERAGE],
        columns=columns(
            ("case", "the failed case"),
            ("memory", "the live memory unit left out"),
            ("memory_id", "its memory entry, if any"),
            ("produced_at", "when it was produced"),
            ("answered_at", "time of the case's answer"),
            ("evidence", "the case's evidence units it descends from"),
            ("retrievals", "retrieval operations on the answer's lineage"),
            ("read_by", "those that read it as a candidate and did not return it"),
            ("answer_words", "words of the expected answer it carries"),
        ),
    ),
    "audits/retrieval_misses",
    memory_carries_answer,
    answer_needles=True,
    cursor_paged=True,
)
