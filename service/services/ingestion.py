"""Accepting a trace batch."""

from __future__ import annotations

from neo4j import AsyncSession

from ingest.rows import batch_rows
from service.errors import PayloadTooLarge
from service.models.traces import IngestResult, TraceBatch
from service.repository import traces
from service.settings import Settings


async def ingest_batch(
    session: AsyncSession, batch: TraceBatch, settings: Settings
) -> IngestResult:
    """Write one batch atomically. Re-sending the same batch is safe: nothing is duplicated."""
    if len(batch.operations) > settings.max_batch_operations:
        raise PayloadTooLarge(
            f"batch has {len(batch.operations)} operations; the limit is "
            f"{settings.max_batch_operations}: split it into smaller batches"
        )
    return await traces.write_batch(session, batch_rows(batch))
