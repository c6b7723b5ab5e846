"""Keeping what OTLP exports were told where their sender can read it.

An OTLP exporter shows its user almost nothing: the Python one ignores the warnings of a 200
(OTLP's partial success) and logs a refusal as one line among the application's. So every
warning of an accepted export and every refusal of one (a 4xx) is also kept in the project's
log: ``GET /otlp/warnings`` lists the newest, ``GET /projects`` (``memtrace projects``) counts
them. Logging runs in a transaction of its own, after the export's: a refused export writes
nothing but this, and a log that cannot be written never changes what the export answers.
"""

from __future__ import annotations

import contextlib
import logging
from datetime import UTC, datetime

from neo4j import AsyncSession

from service.errors import MemTraceError, ProjectBeingDeleted
from service.otlp import warnings_repository as otlp_warnings
from service.otlp.models import OtlpWarning, OtlpWarnings

log = logging.getLogger(__name__)


async def note(session: AsyncSession, project: str, warnings: list[str], status: int = 200) -> None:
    """Keep ``warnings`` in ``project``'s log; a failure to is logged here, never raised."""
    now = datetime.now(UTC)
    entries = [OtlpWarning(at=now, status=status, message=w) for w in warnings]
    with contextlib.suppress(MemTraceError):
        await otlp_warnings.record(session, project, entries)
        return
    log.warning("could not keep %d OTLP warning(s) of project %s", len(entries), project)


async def note_refusal(session: AsyncSession, project: str, error: MemTraceError) -> None:
    """Keep why an export was refused, when the sender could act on it (a 4xx); not for a
    project being deleted, whose log the deletion is removing."""
    if 400 <= error.status_code < 500 and not isinstance(error, ProjectBeingDeleted):
        await note(session, project, [error.message], error.status_code)


async def recent(session: AsyncSession, project: str) -> OtlpWarnings:
    return await otlp_warnings.read(session, project)
