"""The CLI's one HTTP helper: the clients it talks to the service with (URL and API key from the
settings), the check of every answer, and the one error path of every command.

Every failure a person can meet - the service down or lost, an error answer, a refused batch, an
output file that cannot be written - ends the same way: one line on stderr naming what went wrong
and where, and a non-zero exit code (never a traceback). See ``failures_end_in_one_line``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import typer
from memtrace_client import MemTraceClient, MemTraceClientError
from rich.console import Console

from service.settings import get_settings

DEFAULT_PROJECT = "default"
"""The project the service acts on when a request names none (``service.auth``), and so every
command's --project default."""
DEFAULT_PROJECT_HINT = (
    f"{DEFAULT_PROJECT!r} is the project commands use when no --project is given; choose one "
    "with --project NAME (`memtrace projects` lists them)"
)
"""Said with every refusal of the default project: a person who never typed a project name
would not guess where ``'default'`` came from."""

_api_key_option: str | None = None
"""The key given with ``memtrace --api-key KEY COMMAND`` (it wins over MEMTRACE_API_KEY)."""


def use_api_key(key: str | None) -> None:
    global _api_key_option
    _api_key_option = key or None


def api_key() -> str | None:
    """The key the CLI sends: ``--api-key``, else ``MEMTRACE_API_KEY``, else none."""
    if _api_key_option:
        return _api_key_option
    key = get_settings().api_key
    return key.get_secret_value() if key else None


def _auth_headers() -> dict[str, str]:
    key = api_key()
    return {"Authorization": f"Bearer {key}"} if key else {}


def service_url(url: str | None) -> str:
    """``url``, or where the settings put the service (``MEMTRACE_URL``, else
    ``MEMTRACE_HOST``:``MEMTRACE_PORT``) when none is given."""
    return url or get_settings().service_url()


def service_client(url: str | None, timeout_s: float = 300) -> httpx.Client:
    """An HTTP client for the service at ``service_url(url)`` that sends the CLI's API key
    (``api_key``) when one is set."""
    return httpx.Client(base_url=service_url(url), timeout=timeout_s, headers=_auth_headers())


def batch_client(url: str | None) -> MemTraceClient:
    """The SDK's client for sending batches: its retries (connection errors, 429, 5xx) and
    error types are the CLI's too."""
    return MemTraceClient(service_url(url), api_key=api_key(), timeout_s=120, attempts=6)


def unauthorized(where: str) -> str:
    """A 401 in a CLI user's words: the service's own message tells an HTTP client to send
    ``Authorization: Bearer``, which a CLI user does by setting a key, not a header."""
    if api_key() is None:
        return (
            f"HTTP 401: the service at {where} needs an API key: set MEMTRACE_API_KEY "
            "(or give memtrace --api-key KEY before the command)"
        )
    return (
        f"HTTP 401: the service at {where} does not accept the API key the CLI sent "
        "(MEMTRACE_API_KEY or --api-key): check it against the service's MEMTRACE_API_KEYS"
    )


class CommandError(RuntimeError):
    """A command cannot go on; the message says why (one line, shown as is). ``usage`` is True
    when the caller asked for something wrong (a bad argument, a 400, 404 or 422 answer)."""

    def __init__(self, message: str, *, usage: bool) -> None:
        super().__init__(message)
        self.usage = usage


class ServiceRequestError(CommandError):
    """The service refused or failed a CLI request; the message carries its explanation."""


def _details_text(details: Any) -> str:
    """Where each problem is (the error contract's ``details``), appended to the message."""
    if not isinstance(details, list):
        return ""
    return "".join(
        f"; {'.'.join(map(str, d.get('loc', [])))}: {d.get('msg', '')}"
        for d in details
        if isinstance(d, dict)
    )


def checked(response: httpx.Response) -> Any:
    """The JSON of a 2xx; otherwise ``ServiceRequestError`` with the service's message and, for
    validation problems, where each one is."""
    if response.is_success:
        return response.json()
    message = " ".join(response.text[:2000].split())
    try:
        body = response.json()
    except ValueError:
        body = None
    if isinstance(body, dict) and "message" in body:
        message = str(body["message"]) + _details_text(body.get("details"))
    if response.status_code == 401:
        asked = response.request.url
        where = f"{asked.scheme}://{asked.netloc.decode()}"
        raise ServiceRequestError(unauthorized(where), usage=False)
    if (
        response.status_code == 403
        and response.request.url.params.get("project") == DEFAULT_PROJECT
    ):
        message += f"; {DEFAULT_PROJECT_HINT}"
    usage = response.status_code in (400, 404, 422)
    raise ServiceRequestError(f"HTTP {response.status_code}: {message}", usage=usage)


@contextmanager
def failures_end_in_one_line(
    err: Console, url: str | None, *, usage_exit: int = 1, lost_hint: str = ""
) -> Iterator[None]:
    """The one error path of every command: print one line on ``err`` and exit non-zero.

    ``usage_exit`` is the exit code when the caller asked for something wrong (``audit`` uses 2,
    the others 1); ``lost_hint`` is added when the service cannot be reached or is lost midway.
    """
    try:
        yield
    except CommandError as e:
        _one_line(err, str(e))
        raise typer.Exit(usage_exit if e.usage else 1) from None
    except httpx.HTTPError as e:
        reason = " ".join(str(e).split()) or type(e).__name__
        _one_line(err, f"cannot reach the service at {service_url(url)} ({reason}){lost_hint}")
        raise typer.Exit(1) from None
    except MemTraceClientError as e:  # the SDK's refusals and "not delivered" (ingest, demo)
        if getattr(e, "status", None) == 401:
            _one_line(err, unauthorized(service_url(url)))
            raise typer.Exit(1) from None
        body = getattr(e, "body", None)
        details = _details_text(body.get("details")) if isinstance(body, dict) else ""
        _one_line(err, f"{e}{details}")
        raise typer.Exit(1) from None
    except OSError as e:  # an output file: a missing folder, no permission
        _one_line(err, f"cannot write {e.filename or ''}: {e.strerror or e}")
        raise typer.Exit(1) from None


def _one_line(err: Console, message: str) -> None:
    err.print(" ".join(message.split()), style="red", highlight=False, markup=False, soft_wrap=True)
