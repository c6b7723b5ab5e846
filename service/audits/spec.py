"""What an audit is made of, and the parameter two audits share."""

from __future__ import annotations

from dataclasses import dataclass

from service.audits.models import AuditColumn, AuditInfo, AuditParameter, RowFilter


@dataclass(frozen=True)
class AuditSpec:
    info: AuditInfo
    statement: str  # the name of its Cypher statement, for ``cypher.query``
    keep: RowFilter | None = None  # finishes the rule in Python; None: Cypher's rows are the rows
    # The statement takes ``needles``: per failed case, substrings of its expected answer's
    # words, a cheap pre-filter for ``min_answer_coverage`` (see ``words.answer_needles``).
    answer_needles: bool = False
    # Paged with a cursor over the project's failed cases (``service.audits.cursor``), not
    # with skip: the statement takes first_case, last_case and skip (candidates of first_case).
    cursor_paged: bool = False

    @property
    def name(self) -> str:
        return self.info.name


def columns(*pairs: tuple[str, str]) -> list[AuditColumn]:
    """An audit's columns from ``(name, description)`` pairs."""
    return [AuditColumn(name=n, description=d) for n, d in pairs]


COVERAGE = AuditParameter(
    name="min_answer_coverage",
    type="int",
    default=100,
    minimum=0,
    maximum=100,
    description="A memory carries the case's expected answer when its content has at least "
    "this percentage of the answer's content words (stop words aside, lightly stemmed); 0 "
    "reports every memory the graph structure finds.",
)
