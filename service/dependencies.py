"""FastAPI dependencies: settings, and one Neo4j session per request closed in ``finally``."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated

from fastapi import Depends, Request
from neo4j import AsyncDriver, AsyncSession

from service.db import apply_schema
from service.settings import Settings


def app_settings(request: Request) -> Settings:
    """The settings the app was made with (``create_app(settings)``), not a process-wide copy,
    so a test or an embedding program can run an app with settings of its own."""
    settings: Settings = request.app.state.settings
    return settings


SettingsDep = Annotated[Settings, Depends(app_settings)]


async def get_session(request: Request, settings: SettingsDep) -> AsyncIterator[AsyncSession]:
    driver: AsyncDriver = request.app.state.driver
    if not request.app.state.schema_ready:  # Neo4j was down at start-up
        await apply_schema(driver, settings.neo4j_database)
        request.app.state.schema_ready = True
    session = driver.session(database=settings.neo4j_database)
    try:
        yield session
    finally:
        await session.close()


SessionDep = Annotated[AsyncSession, Depends(get_session)]
