"""The audits MemTrace knows: one entry per ``cypher/audits/<name>.cypher`` file, and back.

An entry says what ``GET /audits`` shows (description, parameters with types and defaults,
columns), which statement runs it, and which filter of ``audit_filters`` (if any) finishes its
rule in Python. A test checks that entries and files match one to one.

Every audit also takes ``project``, ``skip`` and ``limit``; those are not listed per audit.
"""

from __future__ import annotations

import typing
from dataclasses import dataclass

from graph_schema import OperationKind
from service.audits.words import (
    lost_words,
    memory_carries_answer,
    versions_carry_answer,
)
from service.models.audits import AuditColumn, AuditInfo, AuditParameter, RowFilter


@dataclass(frozen=True)
class AuditSpec:
    info: AuditInfo
    statement: str  # the name of its Cypher statement, for ``cypher.query``
    keep: RowFilter | None = None  # finishes the rule in Python; None: Cypher's rows are the rows
    # The statement takes ``needles``: the stems of each failed case's expected answer, a cheap
    # pre-filter for ``min_answer_coverage`` (see ``audit_filters.answer_needles``).
    answer_needles: bool = False

    @property
    def name(self) -> str:
        return self.info.name


def _cols(*pairs: tuple[str, str]) -> list[AuditColumn]:
    return [AuditColumn(name=n, description=d) for n, d in pairs]


_COVERAGE = AuditParameter(
    name="min_answer_coverage",
    type="int",
    default=100,
    minimum=0,
    maximum=100,
    description="A memory carries the case's expected answer when its content has at least "
    "this percentage of the answer's content words (stop words aside, lightly stemmed); 0 "
    "reports every memory the graph structure finds.",
)

_SPECS = (
    AuditSpec(
        AuditInfo(
            name="construction_loss",
            description="Source messages whose content never reached any memory: no unit of "
            "kind memory among their descendants within 10 operation steps (never consumed, or "
            "consumed only by operations whose outputs lead to no memory).",
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
            columns=_cols(
                ("message", "id of the message unit"),
                ("preview", "the start of its content"),
                ("ts", "its timestamp"),
                ("consumed_by", "operations that consumed it, earliest first"),
                ("produced_nothing", "those of them that produced no output at all"),
                ("session", "session of its first consumer with one"),
            ),
        ),
        "audits/construction_loss",
    ),
    AuditSpec(
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
            columns=_cols(
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
    ),
    AuditSpec(
        AuditInfo(
            name="deleted_then_needed",
            description="Memory entries deleted before a failed case that needed them: a "
            "version of the entry descends from the case's evidence units (within 10 operation "
            "steps) and carries the expected answer (min_answer_coverage), and a tombstone of "
            "the entry was produced, or a deletion operation consumed one of its versions, at "
            "or after that version was produced and before the case's answer.",
            parameters=[_COVERAGE],
            columns=_cols(
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
    ),
    AuditSpec(
        AuditInfo(
            name="retrieval_misses",
            description="Failed cases whose answer was held by a memory live at question "
            "time that the answer's context lacks: the memory descends from the case's "
            "evidence, carries the expected answer (min_answer_coverage), was produced before "
            "the answer and not superseded or tombstoned before it; no retrieval output of the "
            "answer's lineage holds its text, and those outputs do not carry the answer either "
            "(that would be a response fault).",
            parameters=[_COVERAGE],
            columns=_cols(
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
    ),
    AuditSpec(
        AuditInfo(
            name="dangling_units",
            description="Units known only by id (defined=false): referenced by an operation or "
            "a case but never defined by any batch.",
            parameters=[],
            columns=_cols(
                ("unit", "id of the undefined unit"),
                ("consumed_by", "operations that consume it"),
                ("produced_by", "operations that produce it"),
                ("cases", "cases that name it as answer or evidence"),
            ),
        ),
        "audits/dangling_units",
    ),
    AuditSpec(
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
            columns=_cols(
                ("operation", "id of the operation"),
                ("name", "its name"),
                ("kind", "its kind"),
                ("session", "its session"),
                ("ts", "its time"),
                ("missing", "'inputs', 'outputs' or 'inputs and outputs'"),
            ),
        ),
        "audits/idle_operations",
    ),
)

AUDITS: dict[str, AuditSpec] = {spec.name: spec for spec in _SPECS}
