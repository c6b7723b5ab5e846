"""What the browser views show: a case with its ancestor subgraph and stored attribution, and
the list of a project's cases with theirs.

The views only read. A case that was never attributed is shown without an attribution (the page
offers to run one through ``POST /attribute``); reading a page never starts an attribution.
"""

from __future__ import annotations

from neo4j import AsyncSession

from service.attribution import repository as attributions
from service.errors import CaseNotFound
from service.models.ui import CaseList, CasePage, CaseRow
from service.prompts.service import labels
from service.repository import cases as case_store

LIST_LIMIT = 1000
"""Most cases the list page shows, and most stored attributions it joins them with."""


async def case_page(session: AsyncSession, project: str, case_id: str, node_limit: int) -> CasePage:
    """The case, its answer's ancestors (at most ``node_limit``) and its stored attribution.

    Unlike ``GET /cases/{id}/subgraph``, a case without an answer unit is no error here: the page
    still shows the question and says there is nothing to draw.
    """
    # The case and its ancestors come from one read transaction, so they always agree (the
    # service's case_subgraph reads the same but keeps only the subgraph).
    case, subgraph = await case_store.case_with_ancestors(session, project, case_id, node_limit)
    if case is None:
        raise CaseNotFound(f"no case {case_id!r} in project {project!r}")
    stored = await attributions.get(session, project, case_id)
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
    rows = await case_store.list_cases(session, project, verdict, None, 0, LIST_LIMIT + 1)
    no_filter: dict[str, str | None] = dict.fromkeys(
        ("system", "error_type", "operation_name", "status")
    )
    stored = await attributions.list_results(session, project, no_filter, 0, LIST_LIMIT)
    by_case = {result.case_id: result for result in stored}
    return CaseList(
        project=project,
        verdict=verdict,
        cases=[
            CaseRow(id=row["id"], verdict=row["verdict"], attribution=by_case.get(row["id"]))
            for row in rows[:LIST_LIMIT]
        ],
        limit=LIST_LIMIT,
        truncated=len(rows) > LIST_LIMIT,
    )
