"""The OpenAPI ``responses=`` entries of each route's error codes. The body they document is
``service.error_models.ErrorBody``; the bodies themselves are built in ``service.http_errors``
only."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute
from starlette.routing import BaseRoute

from service.error_models import ErrorBody


def responses(*codes: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI entries for the error codes a route can answer."""
    described = {
        400: "The body cannot be decoded; details says where",
        401: "API keys are on and the request has no valid bearer key",
        403: "The API key is not bound to this project",
        404: "Not found in this project, or the project is being deleted",
        409: "An id already names something different, or the project is being deleted",
        413: "Batch over the size limit",
        415: "Content-Type or Content-Encoding not supported",
        422: "Invalid input; details lists every bad item with its location",
        502: "The LLM endpoint refused or failed the request",
        503: "Neo4j unreachable; retry after Retry-After seconds",
    }
    return {code: {"model": ErrorBody, "description": described[code]} for code in codes}


AUTH = (401, 403)
"""Every route behind the API-key guard can answer these (when keys are configured)."""


def html_route_responses(*codes: int) -> dict[int | str, dict[str, Any]]:
    """``responses(*codes)`` for a route that answers HTML: a browser opening the page gets its
    errors as an HTML page, a script the JSON body (FastAPI would document a ``model`` under the
    route's own media type, text/html, only)."""
    content = {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}}
    return {
        code: {"description": entry["description"], "content": content}
        for code, entry in responses(*codes).items()
    }


def _calls(dependant: Dependant, wanted: Callable[..., Any]) -> bool:
    return any(d.call is wanted or _calls(d, wanted) for d in dependant.dependencies)


def document_deletion_refusals(
    routes: Iterable[BaseRoute],
    reading: Callable[..., Any],
    by_method: Callable[..., Any],
) -> None:
    """Add the answer a project being deleted gets to each route that opens a session on it:
    404 for one on ``reading`` sessions (and a GET on ``by_method`` ones), 409 for any other
    method on ``by_method`` sessions (``service.dependencies``). Derived from the dependency
    that raises it, so a new route is documented without being listed here."""
    for route in routes:
        if not isinstance(route, APIRoute):
            continue
        if _calls(route.dependant, reading):
            code = 404
        elif _calls(route.dependant, by_method):
            code = 404 if (route.methods or set()) <= {"GET", "HEAD"} else 409
        else:
            continue
        route.responses.setdefault(code, responses(code)[code])
