"""``/ui/login``: how a browser gets in when API keys are configured.

A page opened in a browser cannot carry an ``Authorization`` header, so the key is typed once
into a form (POSTed, never put in a URL) and the browser is given an HttpOnly, SameSite=Strict
(and, over https, Secure) cookie holding a session made from it (``service.auth.session_token``,
never the key itself) that ``service.auth_middleware`` accepts like the key, with the same
project binding. The form only takes a key from this service's own page: a form posted from
another origin (a page on another port of this host is one) is refused with 403, so no other
page can sign a browser in under a key of its choosing. Any ``/ui``
page asked for without a key is redirected here (``service.app``). With keys off there is
nothing to log into and the form sends you on.
"""

from __future__ import annotations

import time
from typing import Annotated
from urllib.parse import parse_qs, quote

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from service.auth import SESSION_COOKIE, SESSION_DAYS, find_key, same_origin, session_token
from service.ui import pages

router = APIRouter(prefix="/ui", tags=["ui"], include_in_schema=False)

_HEADERS = {
    # As the other pages, but the form may post to this origin.
    "Content-Security-Policy": pages.CONTENT_SECURITY_POLICY.replace(
        "form-action 'none'", "form-action 'self'"
    ),
    "X-Content-Type-Options": "nosniff",
    # Not no-referrer as the other pages: under it a browser posts the form with "Origin: null"
    # (the Fetch standard's origin serialisation), which the origin check must refuse.
    # same-origin sends the real origin to this service only, and no referrer elsewhere.
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
}


def safe_next(target: str | None) -> str:
    """Where to go after logging in: a path of this UI, never another site."""
    if target and target.startswith("/ui/") and not target.startswith("//") and "\\" not in target:
        return target
    return "/ui/"


def is_page_request(request: Request) -> bool:
    """A browser opening a UI page (not a script fetching data or a static file)."""
    path = request.url.path
    return (
        request.method == "GET"
        and path.startswith("/ui/")
        and not path.startswith(("/ui/static/", "/ui/login"))
    )


def login_redirect(request: Request) -> RedirectResponse:
    """Send a browser that asked for a page without a key to the form, then back."""
    target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    return RedirectResponse(f"/ui/login?next={quote(target, safe='')}", status_code=303)


def _form(target: str, message: str = "", status: int = 200) -> HTMLResponse:
    return HTMLResponse(pages.login_page(target, message), status_code=status, headers=_HEADERS)


@router.get("/login", response_class=HTMLResponse)
async def login_form(
    request: Request, next: Annotated[str | None, Query(max_length=2000)] = None
) -> Response:
    if not request.app.state.api_keys:
        return RedirectResponse(safe_next(next), status_code=303)
    return _form(safe_next(next))


@router.post("/login", response_class=HTMLResponse)
async def login(request: Request) -> Response:
    origin = request.headers.get("origin")
    if origin is not None and not same_origin(origin, request):
        # Browsers send Origin with every form POST. Without this check a page elsewhere could
        # sign the browser in under a key of its own choosing (and read what the user does).
        return _form("/ui/", "Sign in from this service's own page.", status=403)
    body = await request.body()
    form = parse_qs(body.decode("utf-8", "replace")[:10_000])
    target = safe_next((form.get("next") or [""])[0])
    token = (form.get("key") or [""])[0].strip()
    if not request.app.state.api_keys:
        return RedirectResponse(target, status_code=303)
    key = find_key(request.app.state.api_keys, token) if token else None
    if key is None:
        return _form(target, "That key is not one this service accepts.", status=401)
    response = RedirectResponse(target, status_code=303)
    response.set_cookie(
        SESSION_COOKIE,
        session_token(key, time.time()),
        max_age=SESSION_DAYS * 86_400,
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
        path="/",
    )
    return response
