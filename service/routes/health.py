from __future__ import annotations

from fastapi import APIRouter

from service.dependencies import SessionDep
from service.repository import health
from service.routes.errors import responses

router = APIRouter(tags=["health"])


@router.get("/healthz")
async def healthz() -> dict[str, str]:
    """The process is up (says nothing about Neo4j)."""
    return {"status": "ok"}


@router.get("/readyz", responses=responses(503))
async def readyz(session: SessionDep) -> dict[str, str]:
    """Neo4j answers a query."""
    await health.ping(session)
    return {"status": "ready"}
