"""FastAPI dependencies: settings, the stores, and one Neo4j session per request on the store of
the acting project (``service.auth.acting_project``), closed in ``finally``. Opening one on a
project being deleted is refused (``service.projects.service.refuse_if_being_deleted``), except
for ``DELETE /project``, which finishes the deletion."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated

from fastapi import Depends, Request
from neo4j import READ_ACCESS, AsyncSession

from service.auth import ProjectDep
from service.db import Stores
from service.projects.service import refuse_if_being_deleted
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


_READING_METHODS = frozenset({"GET", "HEAD"})


async def get_session(
    request: Request, stores: StoresDep, project: ProjectDep
) -> AsyncIterator[AsyncSession]:
    async with project_session(stores, project) as session:
        writing = request.method not in _READING_METHODS
        await refuse_if_being_deleted(session, project, writing=writing)
        yield session


SessionDep = Annotated[AsyncSession, Depends(get_session)]
"""A session on the acting project's store. Reads in it run in read transactions
(``execute_read``), which a routing driver sends to a cluster's secondaries. A project being
deleted is refused first: a GET as gone (404), any other method as a write (409)."""


@asynccontextmanager
async def writable_project_session(stores: Stores, project: str) -> AsyncIterator[AsyncSession]:
    """``project_session`` for a write to a project learnt from the body (``POST /traces``):
    refused (409) while the project is being deleted."""
    async with project_session(stores, project) as session:
        await refuse_if_being_deleted(session, project, writing=True)
        yield session


async def get_deleting_session(
    stores: StoresDep, project: ProjectDep
) -> AsyncIterator[AsyncSession]:
    async with project_session(stores, project) as session:
        yield session


DeletingSessionDep = Annotated[AsyncSession, Depends(get_deleting_session)]
"""A session for ``DELETE /project`` alone: the one request a project being deleted takes."""

# Rows of an ad-hoc query come from Neo4j in batches this big, so that reading can stop soon
# after the byte budget is spent instead of after the driver's default of 1,000 rows. Neo4j
# sends no row estimated above the whole budget (service.adhoc.bound), so one batch holds at
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
        await refuse_if_being_deleted(session, project, writing=False)
        yield session
    finally:
        await session.close()


ReadSessionDep = Annotated[AsyncSession, Depends(get_read_session)]


async def get_bounded_read_session(
    stores: StoresDep, project: ProjectDep
) -> AsyncIterator[AsyncSession]:
    """A read-access session on the acting project's store, its schema applied, for the
    service's own reads under a time budget (audits, reports: ``service.read_budget``
    runs them in explicit transactions, which take their access mode from the session; their
    statements seek the indexes the schema creates)."""
    store = await stores.ready_for(project)
    async with store.driver.session(
        database=store.database, default_access_mode=READ_ACCESS
    ) as session:
        await refuse_if_being_deleted(session, project, writing=False)
        yield session


BoundedReadSessionDep = Annotated[AsyncSession, Depends(get_bounded_read_session)]
