"""``POST /cases/{case_id}/verdict``: a verdict given after the answer."""

from __future__ import annotations

from fastapi import APIRouter

import service.id_paths  # noqa: F401  (registers the {name:id} path convertor)
from service.auth import ProjectDep
from service.dependencies import SessionDep
from service.models.cases import CaseView
from service.models.verdicts import VerdictIn
from service.routes.errors import responses
from service.services import verdicts

router = APIRouter(tags=["cases"])


@router.post(
    "/cases/{case_id:id}/verdict", response_model=CaseView, responses=responses(400, 404, 422, 503)
)
async def post_verdict(
    case_id: str, verdict: VerdictIn, session: SessionDep, project: ProjectDep
) -> CaseView:
    """Record whether the case's answer was right, later (user feedback, an evaluation run
    afterwards): the case's id is enough, its answer unit need not be known. Idempotent: the
    same verdict sent again changes nothing. A failed case can then be attributed."""
    return await verdicts.record_verdict(session, project, case_id, verdict)
