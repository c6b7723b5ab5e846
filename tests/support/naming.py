"""One request naming a project one way (query, header, batch body, cookie, or not at all), for
the isolation suites (tests/contract/test_isolation.py, and the job endpoints in
tests/attribution/test_attribution_job.py)."""

from __future__ import annotations

from functools import cache
from typing import Any

import httpx

SESSION_COOKIE = "memtrace_session"


@cache
def ui_session(url: str, key: str) -> str:
    """The session cookie a browser gets by signing in with ``key`` at ``/ui/login`` (from the
    service's own page: the Origin it names is the service's)."""
    signed = httpx.post(
        f"{url}/ui/login", data={"key": key, "next": "/ui/"}, headers={"Origin": url}, timeout=60
    )
    assert signed.status_code == 303, signed.text[:300]
    return signed.cookies[SESSION_COOKIE]


def request_naming(
    url: str,
    method: str,
    path: str,
    key: str,
    naming: str,
    target: str,
    *,
    params: dict[str, str] | None = None,
    body: Any = None,
) -> httpx.Response:
    """``method path`` authenticated with ``key`` (bearer, or the UI cookie when ``naming`` is
    ``cookie``) and naming ``target`` in the query, the header, or nowhere (``body`` and
    ``none``: a body naming it is the caller's)."""
    params = dict(params or {})
    headers: dict[str, str] = {}
    cookies: dict[str, str] = {}
    if naming == "cookie":
        cookies[SESSION_COOKIE] = ui_session(url, key)
    else:
        headers["Authorization"] = f"Bearer {key}"
    if naming in ("query", "cookie"):
        params["project"] = target
    elif naming == "header":
        headers["X-MemTrace-Project"] = target
    with httpx.Client(base_url=url, timeout=60, cookies=cookies) as http:
        return http.request(method, path, params=params, headers=headers, json=body)
