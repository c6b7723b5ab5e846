from __future__ import annotations

from fastapi import APIRouter, Request

from service.auth import PrincipalDep, batch_project
from service.dependencies import SettingsDep, StoresDep, writable_project_session
from service.error_responses import responses
from service.traces.models import IngestResult, TraceBatch
from service.traces.service import accept_batch

router = APIRouter(tags=["ingestion"])


@router.post("/traces", response_model=IngestResult, responses=responses(400, 409, 413, 422, 503))
async def post_traces(
    batch: TraceBatch,
    request: Request,
    stores: StoresDep,
    settings: SettingsDep,
    principal: PrincipalDep,
) -> IngestResult:
    """Write a batch of units, operations and cases (in one transaction, a very large one in
    several: a 409 still writes nothing, a re-send after a 503 completes it), into the batch's
    ``project`` (or, when it names none, the project named by ``?project=`` or the
    ``X-MemTrace-Project`` header; else ``default``, and the answer then carries a warning).

    Re-sending an identical batch is safe (200, nothing duplicated); redefining an id with other
    content is a 409 and writes nothing; so is a batch for a project being deleted.
    """
    given = batch.project if "project" in batch.model_fields_set else None
    project, named = batch_project(request, principal, given)
    # The project is known only now (it may be the body's): its store is chosen here.
    async with writable_project_session(stores, project) as session:
        return await accept_batch(
            session, batch.model_copy(update={"project": project}), settings, project_named=named
        )
