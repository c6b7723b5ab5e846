"""API keys: who may call the service, and for which projects.

Off unless keys are configured (``MEMTRACE_API_KEYS`` and/or ``MEMTRACE_API_KEYS_FILE``), so the
local demo needs none; the Docker image sets ``MEMTRACE_AUTH_REQUIRED`` so that a deployment
without keys refuses to start instead of running open.

A key is written ``KEY`` (every project) or ``KEY:project-a,project-b`` (only those). With keys
on, every endpoint but the health probes and the API docs needs ``Authorization: Bearer KEY``,
and the project a request names must be one of its key's: the ``project`` query parameter, else
the ``X-MemTrace-Project`` header, else ``default``; ``POST /traces`` also checks the project in
its body. Only SHA-256 digests of the keys stay in memory, compared in constant time.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, TypeVar

from fastapi import Depends, Request

from service.errors import Forbidden, Unauthorized
from service.settings import Settings

F = TypeVar("F", bound=Callable[..., Any])
PROJECT_HEADER = "X-MemTrace-Project"
KEY_COOKIE = "memtrace_key"
"""Where a browser keeps its key after ``/ui/login`` (HttpOnly, SameSite=Strict): a page cannot
send an ``Authorization`` header when it is opened, so the UI authenticates with this cookie."""
_PROJECT = re.compile(r"^[A-Za-z0-9_.\-]{1,128}$")


class KeyConfigError(ValueError):
    """The configured keys cannot be read; says where, never what the key is."""


@dataclass(frozen=True)
class ApiKey:
    digest: bytes
    projects: frozenset[str] | None  # None: every project
    label: str  # "key #n of <source>", for logs; never the key itself

    def allows(self, project: str) -> bool:
        return self.projects is None or project in self.projects


@dataclass(frozen=True)
class Principal:
    """Who is calling: a configured key, or ``open`` when keys are off."""

    key: ApiKey | None

    @property
    def open(self) -> bool:
        return self.key is None

    def require(self, project: str) -> None:
        """Raise ``Forbidden`` unless this caller may read and write ``project``."""
        if self.key is not None and not self.key.allows(project):
            raise Forbidden(
                f"this API key is not bound to project {project!r}",
                details=[{"loc": ["project"], "msg": "not one of the key's projects"}],
            )


def _digest(key: str) -> bytes:
    return hashlib.sha256(key.encode()).digest()


def parse_keys(entries: list[str], source: str) -> list[ApiKey]:
    """Keys from ``KEY`` / ``KEY:p1,p2`` entries (blank entries and ``#`` comments skipped)."""
    keys = []
    for n, raw in enumerate(entries, 1):
        entry = raw.split("#", 1)[0].strip()
        if not entry:
            continue
        secret, _, scope = entry.partition(":")
        secret = secret.strip()
        if len(secret) < 16:
            raise KeyConfigError(f"API key #{n} of {source} is shorter than 16 characters")
        projects = None
        if scope.strip() and scope.strip() != "*":
            names = [p.strip() for p in scope.split(",") if p.strip()]
            bad = [p for p in names if not _PROJECT.match(p)]
            if bad or not names:
                raise KeyConfigError(f"API key #{n} of {source} names an invalid project")
            projects = frozenset(names)
        keys.append(ApiKey(_digest(secret), projects, f"key #{n} of {source}"))
    return keys


def load_keys(settings: Settings) -> tuple[ApiKey, ...]:
    """Every configured key (empty: keys are off). Raises ``KeyConfigError`` on a bad entry.
    Read once at start-up (``service.app``) and kept on ``app.state.api_keys``."""
    keys: list[ApiKey] = []
    if settings.api_keys is not None:
        keys += parse_keys(settings.api_keys.get_secret_value().split(";"), "MEMTRACE_API_KEYS")
    if settings.api_keys_file is not None:
        path = Path(settings.api_keys_file)
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except OSError as e:
            raise KeyConfigError(f"cannot read the API keys file {path}: {e.strerror}") from e
        keys += parse_keys(lines, str(path))
    if settings.auth_required and not keys:
        raise KeyConfigError(
            "MEMTRACE_AUTH_REQUIRED is set but no API keys are configured: set MEMTRACE_API_KEYS "
            "or MEMTRACE_API_KEYS_FILE"
        )
    return tuple(keys)


def _bearer(request: Request) -> str | None:
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    return token.strip() if scheme.lower() == "bearer" and token.strip() else None


def requested_project(request: Request) -> str:
    """The project a request names, before any body is read."""
    return request.query_params.get("project") or request.headers.get(PROJECT_HEADER) or "default"


def find_key(keys: tuple[ApiKey, ...], token: str) -> ApiKey | None:
    """The configured key ``token`` is, if any."""
    digest = _digest(token)
    match = None
    for key in keys:  # no early exit: every key is compared, in constant time
        if hmac.compare_digest(key.digest, digest):
            match = key
    return match


async def authorize(request: Request) -> Principal:
    """The dependency every protected router runs first: a bearer key, or the UI's cookie."""
    keys: tuple[ApiKey, ...] = request.app.state.api_keys
    if not keys:
        return Principal(None)
    token = _bearer(request) or request.cookies.get(KEY_COOKIE)
    if not token:
        raise Unauthorized("an API key is required: send `Authorization: Bearer <key>`")
    match = find_key(keys, token)
    if match is None:
        raise Unauthorized("unknown API key")
    principal = Principal(match)
    endpoint = request.scope.get("endpoint")
    if not getattr(endpoint, PROJECT_FROM_BODY, False):
        principal.require(requested_project(request))
    return principal


PROJECT_FROM_BODY = "memtrace_project_from_body"


def project_from_body(endpoint: F) -> F:
    """Mark a route whose project is in its body (``POST /traces``): ``authorize`` then leaves
    the check to the route, which must call ``principal.require(<body project>)``."""
    setattr(endpoint, PROJECT_FROM_BODY, True)
    return endpoint


PrincipalDep = Annotated[Principal, Depends(authorize)]
