"""Accepting a trace batch."""

from __future__ import annotations

from neo4j import AsyncSession

from ingest.rows import batch_rows
from service.errors import PayloadTooLarge
from service.settings import Settings
from service.traces import repository as traces
from service.traces.models import IngestResult, TraceBatch

UNNAMED_PROJECT = (
    "the batch names no project (its 'project' field, ?project= or the X-MemTrace-Project "
    "header): it was stored in {!r}"
)
"""The warning of a batch stored in ``default`` because it named no project."""


def check_size(batch: TraceBatch, settings: Settings) -> None:
    """``PayloadTooLarge`` for a batch over the operation limit."""
    if len(batch.operations) > settings.max_batch_operations:
        raise PayloadTooLarge(
            f"batch has {len(batch.operations)} operations; the limit is "
            f"{settings.max_batch_operations}: split it into smaller batches"
        )


async def ingest_batch(
    session: AsyncSession, batch: TraceBatch, settings: Settings, *, project_named: bool = True
) -> IngestResult:
    """Write one batch: in one transaction up to ``settings.write_transaction_rows``, else in
    parts (``repository.write_batch`` says what a failure between them leaves). Re-sending the
    same batch is safe: nothing is duplicated.

    ``project_named`` False: the request named no project and ``batch.project`` is ``default``.
    Such a batch is stored, not refused, and its answer warns (``UNNAMED_PROJECT``). Why not
    refuse it: ``default`` is the whole API's documented fallback (every read takes it when no
    project is named, the local demo and ``curl`` examples rely on it) and refusing would break
    clients that work today, while the SDK always names its project and never meets this. Why
    warn: a writer who forgot the field would otherwise look for the data in its project, see
    nothing and get no hint where it went; the answer names the project written to and says
    so, and the SDK (so ``memtrace ingest`` too) logs it once."""
    check_size(batch, settings)
    result = await traces.write_batch(session, batch_rows(batch), settings.write_transaction_rows)
    if project_named:
        return result
    warning = UNNAMED_PROJECT.format(batch.project)
    return result.model_copy(update={"warnings": [warning, *result.warnings]})
