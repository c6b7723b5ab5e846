"""What the browser views draw: the case page and the case list."""

from __future__ import annotations

from pydantic import BaseModel

from service.models.attribution import AttributionResult
from service.models.cases import CaseView, Subgraph


class CasePage(BaseModel):
    """Everything the case page draws. ``subgraph`` is None when the case names no answer unit."""

    case: CaseView
    subgraph: Subgraph | None
    attribution: AttributionResult | None


class CaseRow(BaseModel):
    """One line of the case list: the case and, if it was attributed, what was blamed."""

    id: str
    verdict: str
    attribution: AttributionResult | None


class CaseList(BaseModel):
    """The list page: ``truncated`` says there were more than ``limit`` cases."""

    project: str
    verdict: str | None
    cases: list[CaseRow]
    limit: int
    truncated: bool
