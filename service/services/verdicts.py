"""Verdicts given after the answer."""

from __future__ import annotations

from neo4j import AsyncSession

from service.errors import CaseNotFound
from service.models.cases import CaseView
from service.models.verdicts import VerdictIn
from service.repository import verdicts


async def record_verdict(
    session: AsyncSession, project: str, case_id: str, verdict: VerdictIn
) -> CaseView:
    """Record ``verdict`` on the case and return it; ``CaseNotFound`` when there is none.
    A stored attribution is kept: attributing again with ``refresh`` explains the new verdict."""
    case = await verdicts.record_verdict(
        session, project, case_id, verdict.verdict, verdict.expected_answer, verdict.note
    )
    if case is None:
        raise CaseNotFound(f"no case {case_id!r} in project {project!r}")
    return case
