"""Looking up cases and what their answers depend on."""

from __future__ import annotations

from neo4j import AsyncSession

from service.errors import CaseNotFound, InvalidInput
from service.models.cases import CaseSummary, CaseView, Subgraph
from service.repository import cases


async def get_case(session: AsyncSession, project: str, case_id: str) -> CaseView:
    """The case; ``CaseNotFound`` when the project has none with this id."""
    case = await cases.get_case(session, project, case_id)
    if case is None:
        raise CaseNotFound(f"no case {case_id!r} in project {project!r}")
    return case


async def case_subgraph(
    session: AsyncSession, project: str, case_id: str, node_limit: int
) -> Subgraph:
    """The ancestor subgraph of the case's answer unit, cut at ``node_limit`` nodes."""
    case, subgraph = await cases.case_with_ancestors(session, project, case_id, node_limit)
    if case is None:
        raise CaseNotFound(f"no case {case_id!r} in project {project!r}")
    if subgraph is None:
        raise InvalidInput(
            f"case {case_id!r} has no answer_unit, so it has no ancestors to show; "
            "send the case again with the id of the unit holding the answer",
            details=[{"loc": ["case", case_id, "answer_unit"], "msg": "missing"}],
        )
    return subgraph


async def list_cases(
    session: AsyncSession,
    project: str,
    verdict: str | None,
    text: str | None,
    skip: int,
    limit: int,
) -> list[CaseSummary]:
    rows = await cases.list_cases(session, project, verdict, text, skip, limit)
    return [CaseSummary(**row) for row in rows]
