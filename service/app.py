"""The FastAPI application: lifespan (one driver), routers, middlewares and error handlers
(``service.http_errors``)."""

from __future__ import annotations

import asyncio
import gc
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import Depends, FastAPI

from service.adhoc import routes as adhoc
from service.attribution import routes as attribution
from service.attribution.jobs import routes as attribution_jobs
from service.attribution.jobs import service as attribution_job_service
from service.attribution.judge_check import routes as judge
from service.attribution.judge_check.service import self_check
from service.attribution.service import probe_llm
from service.audits import routes as audits
from service.auth import KeyConfigError, authorize, load_keys
from service.auth_middleware import AuthenticationMiddleware
from service.body_limit import BodyLimitMiddleware
from service.cases import routes as cases
from service.db import Stores
from service.deletion import routes as deletion
from service.dependencies import get_read_session, get_session
from service.docs import install_docs
from service.error_responses import AUTH, document_deletion_refusals, responses
from service.health import routes as health
from service.http_errors import install_error_handlers
from service.id_paths import EncodedSlashMiddleware
from service.imports import routes as imports
from service.nodes import routes as nodes
from service.otlp import routes as otlp
from service.projects import routes as projects
from service.prompts import routes as prompts
from service.reports import routes as reports
from service.sessions import routes as sessions
from service.settings import Settings, get_settings
from service.traces import routes as traces
from service.ui import routes as ui
from service.ui.errors import PAGE_ERRORS
from service.ui.login import router as ui_login_router

log = logging.getLogger(__name__)


async def _check_llm(settings: Settings) -> None:
    await probe_llm(settings)
    await self_check(settings)


def create_app(settings: Settings | None = None) -> FastAPI:
    """The service. The Neo4j drivers (one per store) are made at start-up and closed at
    shutdown."""
    settings = settings or get_settings()

    try:
        # Read here, not at start-up: an app that never ran its lifespan must not run open.
        api_keys = load_keys(settings)
    except KeyConfigError as e:
        log.error("not starting: %s", e)
        raise

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        app.state.stores = Stores(settings)
        # A store that is down does not stop the start: its projects' requests answer 503 until
        # it is back, then the first one applies its schema.
        await app.state.stores.apply_schemas()
        # In the background, so the start is not slowed: a wrong URL, key or model (readyz),
        # then the judge check of the model (llm_self_check).
        llm_probe = asyncio.create_task(_check_llm(settings))
        # Every process takes chunks of any process's attribution jobs (job_pool takers on the
        # job thread; service.attribution.jobs.runner), and gives old jobs chunks.
        attribution_job_service.start_takers(settings)
        # What start-up made (modules, routes, models, the drivers) lives as long as the process:
        # frozen out of the garbage collector, a full collection walks only what requests made.
        # Reads that build thousands of objects (a ~1,000-node subgraph) set one off every few
        # requests, and walking ~150k start-up objects took 85-115 ms of such a request; frozen,
        # 2-3 ms (issue 14). Collected first so no start-up garbage is kept for good.
        gc.collect()
        gc.freeze()
        try:
            yield
        finally:
            llm_probe.cancel()
            gc.unfreeze()
            await app.state.stores.close()

    app = FastAPI(
        title="MemTrace",
        summary="Trace and attribute errors in LLM memory systems.",
        version="0.1.0",
        lifespan=lifespan,
        docs_url=None,  # service.docs serves both pages without a CDN
        redoc_url=None,
    )
    app.state.settings = settings  # what every route's SettingsDep reads
    app.state.api_keys = api_keys
    app.state.page_errors = PAGE_ERRORS  # errors as pages for a browser (service.http_errors)
    app.add_middleware(EncodedSlashMiddleware)  # ids with "/" in paths (service.id_paths)
    app.add_middleware(BodyLimitMiddleware, max_bytes=settings.max_batch_bytes)
    # Added last, so it runs first: no body is read for a caller without a key.
    app.add_middleware(AuthenticationMiddleware, retry_after_s=settings.retry_after_s)
    install_error_handlers(app, settings.retry_after_s)
    routers = (
        traces,
        otlp,
        imports,
        cases,
        nodes,
        projects,
        attribution,
        attribution_jobs,
        judge,
        reports,
        prompts,
        audits,
        ui,
        adhoc,
        deletion,
        sessions,
        health,
    )
    for module in routers:
        # With API keys configured, everything but the health probes needs one (service.auth).
        guarded = module is not health
        document_deletion_refusals(
            module.router.routes, reading=get_read_session, by_method=get_session
        )
        app.include_router(
            module.router,
            dependencies=[Depends(authorize)] if guarded else None,
            responses=responses(*AUTH) if guarded else None,
        )
    app.include_router(ui_login_router)  # open: it is where a browser without a key goes
    app.include_router(ui.entry_router)  # open: redirects to the console's first page
    install_docs(app)
    return app
