"""The FastAPI application: lifespan (one driver), routers, and the one error-to-HTTP mapping."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import Depends, FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response

from service import ui
from service.auth import KeyConfigError, authorize, load_keys
from service.body_limit import BodyLimitMiddleware
from service.db import apply_schema, create_driver
from service.errors import MemTraceError, RetryableError, StoreUnavailable, Unauthorized
from service.routes import (
    attribution,
    attribution_jobs,
    audits,
    cases,
    cypher,
    health,
    imports,
    otlp,
    reports,
    traces,
)
from service.routes.errors import AUTH, responses
from service.settings import Settings, get_settings
from service.ui.login import is_page_request, login_redirect
from service.ui.login import router as ui_login_router

log = logging.getLogger(__name__)


def _error(
    status: int, code: str, message: str, details: Any = None, headers: dict[str, str] | None = None
) -> JSONResponse:
    body = {"error": code, "message": message, "details": jsonable_encoder(details)}
    return JSONResponse(body, status_code=status, headers=headers)


def _validation_details(exc: RequestValidationError) -> list[dict[str, Any]]:
    # Echoing "input" back would copy memory content into error bodies and logs: leave it out.
    return [
        {"loc": list(err.get("loc", ())), "msg": err.get("msg", ""), "type": err.get("type", "")}
        for err in exc.errors()
    ]


def install_error_handlers(app: FastAPI, settings: Settings) -> None:
    """Map ``MemTraceError`` and request validation to JSON errors; nothing leaks a stack trace."""

    @app.exception_handler(MemTraceError)
    async def on_memtrace_error(request: Request, exc: MemTraceError) -> Response:
        if isinstance(exc, Unauthorized) and is_page_request(request):
            return login_redirect(request)  # a person at a browser: show the key form
        headers = None
        if isinstance(exc, RetryableError):
            headers = {"Retry-After": str(settings.retry_after_s)}
        elif isinstance(exc, Unauthorized):
            headers = {"WWW-Authenticate": 'Bearer realm="memtrace"'}
        return _error(exc.status_code, exc.code, exc.message, exc.details, headers)

    @app.exception_handler(RequestValidationError)
    async def on_validation_error(_: Request, exc: RequestValidationError) -> JSONResponse:
        details = _validation_details(exc)
        return _error(422, "invalid_input", f"{len(details)} invalid item(s); see details", details)

    @app.exception_handler(Exception)
    async def on_unexpected(_: Request, exc: Exception) -> JSONResponse:
        log.error("unexpected %s while serving a request", type(exc).__name__, exc_info=exc)
        return _error(500, "internal_error", "unexpected server error; see the service log")


def create_app(settings: Settings | None = None) -> FastAPI:
    """The service. The Neo4j driver is made at start-up and closed at shutdown."""
    settings = settings or get_settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        try:
            app.state.api_keys = load_keys(settings)
        except KeyConfigError as e:
            log.error("not starting: %s", e)
            raise
        app.state.driver = create_driver(settings)
        app.state.schema_ready = False
        try:
            await apply_schema(app.state.driver, settings.neo4j_database)
            app.state.schema_ready = True
        except StoreUnavailable:
            # Start anyway: requests answer 503 until Neo4j is back, then the first one applies it.
            log.warning("neo4j not reachable at start-up; the schema is applied on first use")
        try:
            yield
        finally:
            await app.state.driver.close()

    app = FastAPI(
        title="MemTrace",
        summary="Trace and attribute errors in LLM memory systems.",
        version="0.1.0",
        lifespan=lifespan,
    )
    app.add_middleware(BodyLimitMiddleware, max_bytes=settings.max_batch_bytes)
    install_error_handlers(app, settings)
    routers = (traces, otlp, imports, cases, attribution, reports, audits, ui, cypher, health)
    for module in (*routers, attribution_jobs):
        # With API keys configured, everything but the health probes needs one (service.auth).
        guarded = module is not health
        app.include_router(
            module.router,
            dependencies=[Depends(authorize)] if guarded else None,
            responses=responses(*AUTH) if guarded else None,
        )
    app.include_router(ui_login_router)  # open: it is where a browser without a key goes
    return app
