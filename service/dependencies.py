"""FastAPI dependencies: settings, the stores, and one Neo4j session per request on the store of
the acting project (``service.auth.acting_project``), closed in ``finally``."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated

from fastapi import Depends, Request
from neo4j import READ_ACCESS, AsyncSession

from service.auth import ProjectDep
from service.db import Stores
from service.settings import Settings


def app_settings(request: Request) -> Settings:
    """The settings the app was made with (``create_app(settings)``), not a process-wide copy,
    so a test or an embedding program can run an app with settings of its own."""
    settings: Settings = request.app.state.settings
    return settings


SettingsDep = Annotated[Settings, Depends(app_settings)]


def app_stores(request: Request) -> Stores:
    """The app's drivers, one per store (made in the lifespan)."""
    stores: Stores = request.app.state.stores
    return stores


StoresDep = Annotated[Stores, Depends(app_stores)]


@asynccontextmanager
async def project_session(stores: Stores, project: str) -> AsyncIterator[AsyncSession]:
    """A session on the store holding ``project`` (its schema applied). For a route that learns
    its project from the body (``POST /traces``); the others take ``SessionDep``."""
    store = await stores.ready_for(project)
    async with store.driver.session(database=store.database) as session:
        yield session


async def get_session(stores: StoresDep, project: ProjectDep) -> AsyncIterator[AsyncSession]:
    async with project_session(stores, project) as session:
        yield session


SessionDep = Annotated[AsyncSession, Depends(get_session)]
"""A session on the acting project's store. Reads in it run in read transactions
(``execute_read``), which a routing driver sends to a cluster's secondaries."""

# Rows of an ad-hoc query come from Neo4j in batches this big, so that reading can stop soon
# after the byte budget is spent instead of after the driver's default of 1,000 rows. Neo4j
# sends no row estimated above the whole budget (service.adhoc_bound), so one batch holds at
# most 8 budgets; fewer rows per batch cost a round trip each (1,000 rows: 1.2 s at 8, 2.2 s
# at 4, 6.1 s at 1 against 0.8 s at 50, on a loaded 2-core machine).
_ADHOC_FETCH_SIZE = 8


async def get_read_session(stores: StoresDep, project: ProjectDep) -> AsyncIterator[AsyncSession]:
    """A read-access session on the acting project's store: Neo4j itself refuses writes in its
    transactions, and a routing driver sends them to a secondary. (No schema bootstrap: a read
    needs no constraint.)"""
    store = stores.for_project(project)
    session = store.driver.session(
        database=store.database, default_access_mode=READ_ACCESS, fetch_size=_ADHOC_FETCH_SIZE
    )
    try:
        yield session
    finally:
        await session.close()


ReadSessionDep = Annotated[AsyncSession, Depends(get_read_session)]
