from __future__ import annotations

from fastapi import APIRouter

from graph_schema.models import IngestResult, TraceBatch
from service.auth import PrincipalDep, project_from_body
from service.dependencies import SessionDep, SettingsDep
from service.routes.errors import responses
from service.services.ingestion import ingest_batch

router = APIRouter(tags=["ingestion"])


@router.post("/traces", response_model=IngestResult, responses=responses(409, 413, 422, 503))
@project_from_body
async def post_traces(
    batch: TraceBatch, session: SessionDep, settings: SettingsDep, principal: PrincipalDep
) -> IngestResult:
    """Write a batch of units, operations and cases in one transaction.

    Re-sending an identical batch is safe (200, nothing duplicated); redefining an id with other
    content is a 409 and writes nothing.
    """
    principal.require(batch.project)  # the body names the project here, not the query string
    return await ingest_batch(session, batch, settings)
