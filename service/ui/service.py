"""What the browser views show: a case with its ancestor subgraph and stored attribution, and
the list of a project's cases with theirs.

The views only read. A case that was never attributed is shown without an attribution (the page
offers to run one through ``POST /attribute``); reading a page never starts an attribution.
"""

from __future__ import annotations

from neo4j import AsyncSession

from service.attribution import service as attributions
from service.attribution.models import AttributionResult
from service.cases import service as cases
from service.cases.models import CaseFilters
from service.errors import NotFound
from service.prompts.service import labels
from service.ui.models import CaseList, CasePage, CaseRow

LIST_LIMIT = 1000
"""Most cases the list page shows, and most stored attributions it joins them with."""


async def case_page(session: AsyncSession, project: str, case_id: str, node_limit: int) -> CasePage:
    """The case, its answer's ancestors (at most ``node_limit``) and its stored attribution.

    Unlike ``GET /cases/{id}/subgraph``, a case without an answer unit is no error here: the page
    still shows the question and says there is nothing to draw.
    """
    case, subgraph = await cases.case_with_subgraph(session, project, case_id, node_limit)
    try:
        stored: AttributionResult | None = await attributions.stored_attribution(
            session, project, case_id
        )
    except NotFound:  # never attributed: the page offers to run one
        stored = None
    shown = {n.id for n in subgraph.nodes if n.kind == "prompt"} if subgraph else set()
    versions = await labels(session, project) if shown else {}
    return CasePage(
        case=case,
        subgraph=subgraph,
        attribution=stored,
        prompt_versions={uid: label for uid, label in versions.items() if uid in shown},
    )


async def case_list(session: AsyncSession, project: str, verdict: str | None) -> CaseList:
    """The project's cases (those with ``verdict`` when given) with their stored attributions."""
    rows = await cases.list_cases(session, project, CaseFilters(verdict=verdict), 0, LIST_LIMIT + 1)
    no_filter: dict[str, str | None] = dict.fromkeys(
        ("system", "error_type", "operation_name", "status")
    )
    stored = await attributions.list_attributions(session, project, no_filter, 0, LIST_LIMIT)
    by_case = {result.case_id: result for result in stored}
    return CaseList(
        project=project,
        verdict=verdict,
        cases=[
            CaseRow(id=row.id, verdict=row.verdict, attribution=by_case.get(row.id))
            for row in rows[:LIST_LIMIT]
        ],
        limit=LIST_LIMIT,
        truncated=len(rows) > LIST_LIMIT,
    )
