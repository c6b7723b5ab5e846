"""Looking up cases and what their answers depend on, and recording verdicts given later."""

from __future__ import annotations

from neo4j import AsyncSession

from service.cases import repository as cases
from service.cases.models import (
    CaseFilters,
    CaseSummary,
    CaseView,
    Subgraph,
    SubgraphBounds,
    VerdictIn,
)
from service.errors import CaseNotFound, InvalidInput
from service.settings import Settings
from service.times import in_utc


async def get_case(session: AsyncSession, project: str, case_id: str) -> CaseView:
    """The case; ``CaseNotFound`` when the project has none with this id."""
    case = await cases.get_case(session, project, case_id)
    if case is None:
        raise CaseNotFound(f"no case {case_id!r} in project {project!r}")
    return case


def subgraph_bounds(settings: Settings, limit: int | None) -> SubgraphBounds:
    """The bounds of one request's subgraph: the node ``limit`` it asked for (never above the
    server's) and the server's byte and value budgets."""
    return SubgraphBounds(
        settings.node_limit(limit), settings.subgraph_max_bytes, settings.subgraph_value_chars
    )


async def case_with_subgraph(
    session: AsyncSession, project: str, case_id: str, bounds: SubgraphBounds
) -> tuple[CaseView, Subgraph | None]:
    """The case and its answer's ancestors (as many as ``bounds`` allow), read in one
    transaction so they always agree; no subgraph when the case has no answer unit.
    ``CaseNotFound`` when the project has no such case."""
    case, subgraph = await cases.case_with_ancestors(session, project, case_id, bounds)
    if case is None:
        raise CaseNotFound(f"no case {case_id!r} in project {project!r}")
    return case, subgraph


async def case_subgraph(
    session: AsyncSession, project: str, case_id: str, bounds: SubgraphBounds
) -> Subgraph:
    """The ancestor subgraph of the case's answer unit, within ``bounds``."""
    _, subgraph = await case_with_subgraph(session, project, case_id, bounds)
    if subgraph is None:
        raise InvalidInput(
            f"case {case_id!r} has no answer_unit, so it has no ancestors to show; "
            "send the case again with the id of the unit holding the answer",
            details=[{"loc": ["case", case_id, "answer_unit"], "msg": "missing"}],
        )
    return subgraph


async def list_cases(
    session: AsyncSession, project: str, filters: CaseFilters, skip: int, limit: int
) -> list[CaseSummary]:
    """A page of the project's cases matching every filter given (times with no zone: UTC)."""
    in_zone = filters.model_copy(
        update={
            "since": in_utc(filters.since, "since"),
            "until": in_utc(filters.until, "until"),
            "text": filters.text.lower() if filters.text else None,
        }
    )
    rows = await cases.list_cases(session, project, in_zone, skip, limit)
    return [CaseSummary(**row) for row in rows]


async def record_verdict(
    session: AsyncSession, project: str, case_id: str, verdict: VerdictIn
) -> CaseView:
    """Record ``verdict`` on the case and return it; ``CaseNotFound`` when there is none.
    A verdict or expected answer that differs from the stored one deletes the case's stored
    attribution (``cypher/verdicts/record_verdict``): it was made for the old one, and kept it
    would count as an attributed failure of a case no longer failed."""
    case = await cases.record_verdict(
        session, project, case_id, verdict.verdict, verdict.expected_answer, verdict.note
    )
    if case is None:
        raise CaseNotFound(f"no case {case_id!r} in project {project!r}")
    return case
