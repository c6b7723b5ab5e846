"""What the browser views draw: the case page and the case list."""

from __future__ import annotations

from pydantic import BaseModel

from service.attribution.models import AttributionResult
from service.cases.models import CaseView, Subgraph


class CasePage(BaseModel):
    """Everything the case page draws. ``subgraph`` is None when the case names no answer unit."""

    case: CaseView
    subgraph: Subgraph | None
    attribution: AttributionResult | None
    prompt_versions: dict[str, str] = {}
    """``name@n`` of the prompt versions in the subgraph, by unit id: the page shows which
    version the blamed operation ran with (its CONSUMES edge to a prompt unit)."""


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
