from __future__ import annotations

from fastapi import APIRouter

from service.dependencies import StoresDep
from service.repository import health
from service.routes.errors import responses

router = APIRouter(tags=["health"])


@router.get("/healthz")
async def healthz() -> dict[str, str]:
    """The process is up (says nothing about Neo4j)."""
    return {"status": "ok"}


@router.get("/readyz", responses=responses(503))
async def readyz(stores: StoresDep) -> dict[str, str]:
    """Every Neo4j store answers a query (with project placement, a service that cannot reach
    one of its stores cannot serve that store's projects: not ready)."""
    for store in stores.all():
        async with store.driver.session(database=store.database) as session:
            await health.ping(session)
    return {"status": "ready"}
