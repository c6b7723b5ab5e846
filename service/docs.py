"""``/docs`` (Swagger UI) and ``/redoc`` served from the install, with no CDN.

FastAPI's own pages load their scripts from a CDN, so on a machine without internet they stay
blank. The ``fastapi-standalone-docs`` wheel ships Swagger UI's and ReDoc's standalone builds;
we serve those files ourselves (and only those files) under ``/docs/static/``.
"""

from __future__ import annotations

from importlib import resources

from fastapi import FastAPI
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

STATIC_PREFIX = "/docs/static"


def install_docs(app: FastAPI) -> None:
    """Add ``/docs``, ``/redoc`` and their assets to ``app`` (made with ``docs_url=None``)."""
    assets = resources.files("fastapi_standalone_docs") / "static"
    app.mount(STATIC_PREFIX, StaticFiles(directory=str(assets)), name="docs-static")
    openapi_url = app.openapi_url or "/openapi.json"

    @app.get("/docs", include_in_schema=False)
    async def swagger_ui() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url=openapi_url,
            title=f"{app.title} API",
            swagger_js_url=f"{STATIC_PREFIX}/swagger/swagger-ui-bundle.js",
            swagger_css_url=f"{STATIC_PREFIX}/swagger/swagger-ui.css",
            swagger_favicon_url=f"{STATIC_PREFIX}/fastapi/favicon.png",
        )

    @app.get("/redoc", include_in_schema=False)
    async def redoc() -> HTMLResponse:
        return get_redoc_html(
            openapi_url=openapi_url,
            title=f"{app.title} API",
            redoc_js_url=f"{STATIC_PREFIX}/redoc/redoc.standalone.js",
            redoc_favicon_url=f"{STATIC_PREFIX}/fastapi/favicon.png",
            with_google_fonts=False,
        )
