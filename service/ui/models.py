"""What the browser views start from: the case page's case, graph and attribution, and a
console page's context."""

from __future__ import annotations

from pydantic import BaseModel, Field

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
    sessions: list[str] = []
    """The sessions the case was asked in (``GET /sessions/{id}``): the page links to each."""


class ConsolePage(BaseModel):
    """What a console page's script starts from: which page, for which project; the data it
    shows it reads from the JSON API itself, with the browser's key, like any other client."""

    page: str
    title: str
    project: str | None
    name: str | None = None
    kind: str | None = Field(None, description='The node page\'s: "unit" or "operation".')
    base: str = Field(description='The way back to /ui/ from this page\'s URL ("" or "../").')
