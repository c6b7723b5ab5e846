from __future__ import annotations

from fastapi import APIRouter

from graph_schema.models import IngestResult, TraceBatch
from service.dependencies import SessionDep, SettingsDep
from service.routes.errors import responses
from service.services.ingestion import ingest_batch

router = APIRouter(tags=["ingestion"])


@router.post("/traces", response_model=IngestResult, responses=responses(409, 413, 422, 503))
async def post_traces(
    batch: TraceBatch, session: SessionDep, settings: SettingsDep
) -> IngestResult:
    """Write a batch of units, operations and cases in one transaction.

    Re-sending an identical batch is safe (200, nothing duplicated); redefining an id with other
    content is a 409 and writes nothing.
    """
    return await ingest_batch(session, batch, settings)
