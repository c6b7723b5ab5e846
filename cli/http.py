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


def _auth_headers() -> dict[str, str]:
    key = get_settings().api_key
    return {"Authorization": f"Bearer {key.get_secret_value()}"} if key else {}


def service_url(url: str | None) -> str:
    """``url``, or ``MEMTRACE_URL`` from the settings when none is given."""
    return url or get_settings().url


def service_client(url: str | None, timeout_s: float = 300) -> httpx.Client:
    """An HTTP client for the service at ``url`` (``MEMTRACE_URL`` by default) that sends the
    CLI's API key (``MEMTRACE_API_KEY``) when one is set."""
    return httpx.Client(base_url=service_url(url), timeout=timeout_s, headers=_auth_headers())


def batch_client(url: str | None) -> MemTraceClient:
    """The SDK's client for sending batches: its retries (connection errors, 429, 5xx) and
    error types are the CLI's too."""
    key = get_settings().api_key
    return MemTraceClient(
        service_url(url),
        api_key=key.get_secret_value() if key else None,
        timeout_s=120,
        attempts=6,
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
        body = getattr(e, "body", None)
        details = _details_text(body.get("details")) if isinstance(body, dict) else ""
        _one_line(err, f"{e}{details}")
        raise typer.Exit(1) from None
    except OSError as e:  # an output file: a missing folder, no permission
        _one_line(err, f"cannot write {e.filename or ''}: {e.strerror or e}")
        raise typer.Exit(1) from None


def _one_line(err: Console, message: str) -> None:
    err.print(" ".join(message.split()), style="red", highlight=False, markup=False, soft_wrap=True)
