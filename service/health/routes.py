from __future__ import annotations

from fastapi import APIRouter

from service.attribution.service import llm_refusal
from service.dependencies import SettingsDep, StoresDep
from service.error_responses import responses
from service.errors import LLMNotReady
from service.health import repository as health

router = APIRouter(tags=["health"])


@router.get("/healthz")
async def healthz() -> dict[str, str]:
    """The process is up (says nothing about Neo4j)."""
    return {"status": "ok"}


@router.get("/readyz", responses=responses(503))
async def readyz(stores: StoresDep, settings: SettingsDep) -> dict[str, str]:
    """Every Neo4j store answers a query (with project placement, a service that cannot reach
    one of its stores cannot serve that store's projects: not ready), and a configured LLM
    endpoint did not refuse us (401/403/404 at start-up or on its last use: its settings are
    wrong, and an llm judge would fail every case).

    ``store_id`` is the id of the default store's database: ``memtrace demo`` compares it with
    the Neo4j it started before writing into a service it finds already answering, which may
    be another user's on the same machine. An id says nothing of what the database holds."""
    default_id = ""
    for store in stores.all():  # the default first
        async with store.driver.session(database=store.database) as session:
            await health.ping(session)
            default_id = default_id or await health.store_id(session)
    refused = llm_refusal(settings)
    if refused:
        raise LLMNotReady(refused, details=[{"loc": ["settings", "llm_base_url"], "msg": refused}])
    return {"status": "ready", "store_id": default_id}
