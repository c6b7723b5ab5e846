"""What the deletion endpoints return (``DELETE /sessions/{id}``, ``/data``, ``/project``)."""

from __future__ import annotations

from pydantic import BaseModel


class DeletionCounts(BaseModel):
    """What a deletion removed. Cases go with the operation that produced their answer; the
    attributions that blamed a deleted operation go too (re-attribute those cases)."""

    operations: int = 0
    units: int = 0
    cases: int = 0
    attributions: int = 0

    def plus(self, other: DeletionCounts) -> DeletionCounts:
        return DeletionCounts(
            operations=self.operations + other.operations,
            units=self.units + other.units,
            cases=self.cases + other.cases,
            attributions=self.attributions + other.attributions,
        )


class ProjectDeleted(BaseModel):
    project: str
    nodes: int
