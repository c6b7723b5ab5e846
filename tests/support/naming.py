"""One request naming a project one way (query, header, batch body, cookie, or not at all), for
the isolation suites (tests/contract/test_isolation.py, and the job endpoints in
tests/attribution/test_attribution_job.py)."""

from __future__ import annotations

from typing import Any

import httpx


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
        cookies["memtrace_key"] = key
    else:
        headers["Authorization"] = f"Bearer {key}"
    if naming in ("query", "cookie"):
        params["project"] = target
    elif naming == "header":
        headers["X-MemTrace-Project"] = target
    with httpx.Client(base_url=url, timeout=60, cookies=cookies) as http:
        return http.request(method, path, params=params, headers=headers, json=body)
