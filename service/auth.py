"""API keys: who may call the service, and for which projects.

Off unless keys are configured (``MEMTRACE_API_KEYS`` and/or ``MEMTRACE_API_KEYS_FILE``), so the
local demo needs none; the Docker image sets ``MEMTRACE_AUTH_REQUIRED`` so that a deployment
without keys refuses to start instead of running open.

A key is written ``KEY`` or ``KEY:*`` (every project) or ``KEY:project-a,project-b`` (only those);
``KEY:`` is refused at start-up. With keys on, every endpoint but the health probes, the API docs
and the login form needs ``Authorization: Bearer KEY`` (or the UI's cookie); that is checked by
``service.auth_middleware`` before a body is read. The project a request acts on is decided in
one place, ``acting_project``: the ``project`` query parameter, else the ``X-MemTrace-Project``
header (both given and different: 422), else ``default``, and it must be one of the key's.
``POST /traces`` names its project in the batch instead, which must agree with a named one.
Only SHA-256 digests of the keys stay in memory, compared in constant time.
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated
from urllib.parse import urlsplit

from fastapi import Depends, Header, Query, Request
from memtrace_client.models import ProjectName, is_project_name
from starlette.datastructures import Headers
from starlette.requests import HTTPConnection

from service.errors import Forbidden, InvalidInput
from service.settings import Settings

PROJECT_HEADER = "X-MemTrace-Project"
SESSION_COOKIE = "memtrace_session"
"""Where a browser keeps its session after ``/ui/login`` (HttpOnly, SameSite=Strict): a page
cannot send an ``Authorization`` header when it is opened, so the UI authenticates with this
cookie. It holds a ``session_token``, never the key."""
SESSION_DAYS = 7


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
        secret, colon, scope = entry.partition(":")
        secret, scope = secret.strip(), scope.strip()
        if len(secret) < 16:
            raise KeyConfigError(f"API key #{n} of {source} is shorter than 16 characters")
        if colon and not scope:
            # "KEY:" reads like "bound to nothing" but would grant everything: make it explicit.
            raise KeyConfigError(
                f"API key #{n} of {source} ends with ':' and names no project: list its "
                "projects after the colon, or write the key alone (or KEY:*) for every project"
            )
        projects = None
        if colon and scope != "*":
            names = [p.strip() for p in scope.split(",") if p.strip()]
            bad = [p for p in names if not is_project_name(p)]
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


def bearer_token(headers: Headers) -> str | None:
    scheme, _, token = headers.get("authorization", "").partition(" ")
    return token.strip() if scheme.lower() == "bearer" and token.strip() else None


def find_key(keys: tuple[ApiKey, ...], token: str) -> ApiKey | None:
    """The configured key ``token`` is, if any."""
    digest = _digest(token)
    match = None
    for key in keys:  # no early exit: every key is compared, in constant time
        if hmac.compare_digest(key.digest, digest):
            match = key
    return match


def _session_mac(key: ApiKey, expires: int) -> str:
    return hmac.new(key.digest, f"memtrace-ui-session:{expires}".encode(), "sha256").hexdigest()


def session_token(key: ApiKey, now: float) -> str:
    """What the UI's cookie holds for ``key``: when it expires and an HMAC of that made with the
    key's digest. It proves the browser was given the key without holding it: a cookie that
    leaks (a log, a shared profile) gives neither the key nor a way to make another session,
    and it stops working at its expiry or when the key is removed from the configuration.
    Stateless, so every worker and a restarted service read it alike."""
    expires = int(now) + SESSION_DAYS * 86_400
    return f"{expires}.{_session_mac(key, expires)}"


def find_session_key(keys: tuple[ApiKey, ...], token: str, now: float) -> ApiKey | None:
    """The configured key a ``session_token`` was made for, if it has not expired."""
    expires_text, _, mac = token.partition(".")
    # isascii: str.isdigit also takes digits such as "²", which int() refuses.
    well_formed = expires_text.isascii() and expires_text.isdigit() and len(expires_text) <= 12
    if not well_formed or int(expires_text) <= now:
        return None
    expires, match = int(expires_text), None
    for key in keys:  # no early exit, as in find_key
        if hmac.compare_digest(_session_mac(key, expires), mac):
            match = key
    return match


def same_origin(origin: str, connection: HTTPConnection) -> bool:
    """Whether a browser's ``Origin`` header names the origin ``connection`` was sent to."""
    parts = urlsplit(origin)
    host = connection.headers.get("host", "")
    return parts.scheme == connection.url.scheme and parts.netloc.lower() == host.lower()


def named_project(query: str | None, header: str | None) -> str | None:
    """The project a request names in its query (``?project=``) or ``X-MemTrace-Project``
    header, if any. Naming two different ones is refused rather than guessed between."""
    if query and header and query != header:
        raise InvalidInput(
            f"the project query parameter ({query!r}) and the {PROJECT_HEADER} header "
            f"({header!r}) name different projects",
            details=[{"loc": ["query", "project"], "msg": f"differs from {PROJECT_HEADER}"}],
        )
    return query or header or None


def principal_of(request: Request) -> Principal:
    """Who is calling, as ``service.auth_middleware`` established it before the body was read."""
    principal = getattr(request.state, "principal", None)
    if principal is None:  # the middleware runs before every route; keys are off
        return Principal(None)
    assert isinstance(principal, Principal)
    return principal


async def authorize(request: Request) -> Principal:
    """The dependency every protected router runs: the caller, checked against the project the
    request names (if it names one; routes then act on it through ``ProjectDep``)."""
    principal = principal_of(request)
    named = named_project(request.query_params.get("project"), request.headers.get(PROJECT_HEADER))
    if named is not None:
        principal.require(named)
    return principal


PrincipalDep = Annotated[Principal, Depends(authorize)]


async def acting_project(
    principal: PrincipalDep,
    project: Annotated[
        ProjectName | None,
        Query(description="The project (tenant) to act on; or the X-MemTrace-Project header."),
    ] = None,
    project_header: Annotated[
        ProjectName | None,
        Header(alias=PROJECT_HEADER, description="The project, when not in the query."),
    ] = None,
) -> str:
    """The one place that decides which project a request acts on: the one it names, else
    ``default``, and only if the caller's key is bound to it. Every route that reads or writes a
    project's graph takes it from here (``ProjectDep``)."""
    chosen = named_project(project, project_header) or DEFAULT_PROJECT
    principal.require(chosen)
    return chosen


ProjectDep = Annotated[str, Depends(acting_project)]
DEFAULT_PROJECT = "default"


def batch_project(request: Request, principal: Principal, in_body: str | None) -> tuple[str, bool]:
    """The project of an endpoint that names it in its body (``POST /traces``): the body's, the
    one the query or header names when the body names none, else ``default``; and whether the
    request named it at all (False: ``default`` was chosen for it). A body and a query or
    header that disagree are refused rather than guessed between."""
    named = named_project(request.query_params.get("project"), request.headers.get(PROJECT_HEADER))
    if in_body is not None:
        principal.require(in_body)
    if in_body is not None and named is not None and in_body != named:
        raise InvalidInput(
            f"the batch names project {in_body!r} but the request names {named!r}",
            details=[{"loc": ["body", "project"], "msg": "differs from the project named"}],
        )
    chosen = in_body or named or DEFAULT_PROJECT
    principal.require(chosen)
    return chosen, bool(in_body or named)
