"""Accepting a trace batch."""

from __future__ import annotations

from collections.abc import Collection

from neo4j import AsyncSession

from ingest.rows import BatchRows, batch_rows
from service.errors import PayloadTooLarge
from service.settings import Settings
from service.traces import repository as traces
from service.traces.models import IngestResult, TraceBatch

UNNAMED_PROJECT = (
    "the batch names no project (its 'project' field, ?project= or the X-MemTrace-Project "
    "header): it was stored in {!r}"
)
"""The warning of a batch stored in ``default`` because it named no project."""

UNDEFINED_UNIT = (
    "case {case!r}: its {field} {unit!r} is defined neither in this batch nor in project "
    "{project!r} (no unit of that id was sent with its kind and content), so attribution has "
    "nothing to trace it by; send the unit, or the operation that produced it"
)
"""The warning of a case naming a unit that nothing defines (``undefined_unit_warnings``)."""


def check_size(batch: TraceBatch, settings: Settings) -> None:
    """``PayloadTooLarge`` for a batch over the operation limit."""
    if len(batch.operations) > settings.max_batch_operations:
        raise PayloadTooLarge(
            f"batch has {len(batch.operations)} operations; the limit is "
            f"{settings.max_batch_operations}: split it into smaller batches"
        )


async def ingest_batch(
    session: AsyncSession, batch: TraceBatch, settings: Settings
) -> IngestResult:
    """Write one batch: in one transaction up to ``settings.write_transaction_rows``, else in
    parts (``repository.write_batch`` says what a failure between them leaves). Re-sending the
    same batch is safe: nothing is duplicated.
    Batches the service builds itself (OTLP exports, imported graphs, cases recorded on a trace)
    are written with this; ``accept_batch`` is ``POST /traces``'s, which warns the sender."""
    result, _ = await _write(session, batch, settings)
    return result


async def _write(
    session: AsyncSession, batch: TraceBatch, settings: Settings
) -> tuple[IngestResult, BatchRows]:
    """Write the batch; what was written and the batch's rows (which units it defines)."""
    check_size(batch, settings)
    rows = batch_rows(batch)
    return await traces.write_batch(session, rows, settings.write_transaction_rows), rows


async def accept_batch(
    session: AsyncSession, batch: TraceBatch, settings: Settings, *, project_named: bool = True
) -> IngestResult:
    """``POST /traces``: ``ingest_batch``, with the warnings a sender needs (``warnings``).

    ``project_named`` False: the request named no project and ``batch.project`` is ``default``.
    Such a batch is stored, not refused, and its answer warns (``UNNAMED_PROJECT``). Why not
    refuse it: ``default`` is the whole API's documented fallback (every read takes it when no
    project is named, the local demo and ``curl`` examples rely on it) and refusing would break
    clients that work today, while the SDK always names its project and never meets this. Why
    warn: a writer who forgot the field would otherwise look for the data in its project, see
    nothing and get no hint where it went; the answer names the project written to and says
    so, and the SDK (so ``memtrace ingest`` too) logs it once."""
    result, rows = await _write(session, batch, settings)
    warnings = [] if project_named else [UNNAMED_PROJECT.format(batch.project)]
    warnings += result.warnings  # the writer's own (units a concurrent deletion removed)
    warnings += await undefined_unit_warnings(session, batch, rows.units.keys())
    return result.model_copy(update={"warnings": warnings}) if warnings else result


async def undefined_unit_warnings(
    session: AsyncSession, batch: TraceBatch, in_batch: Collection[str]
) -> list[str]:
    """A warning (``UNDEFINED_UNIT``) per unit a case of the stored ``batch`` names as its
    ``answer_unit`` or among its ``evidence_units`` that is defined neither in the batch (the
    ids ``in_batch``) nor in the store (a later batch may still define it: the case is stored
    all the same).

    Why warn, not refuse: a case may come before the answer's trace (a verdict pipeline apart
    from the traced system), and the unit's batch then makes it whole. But a typo'd or
    never-sent id makes the case silently unattributable ("no operation produced the answer
    unit"), which the sender should hear at once. Only ``POST /traces``: the service's own
    batches name units it found in the store."""
    named = [
        (case.id, field, unit)
        for case in batch.cases
        for field, units in (
            ("answer_unit", [case.answer_unit] if case.answer_unit else []),
            ("evidence_units", case.evidence_units),
        )
        for unit in units
    ]
    unknown = {unit for _, _, unit in named if unit not in in_batch}
    if not unknown:
        return []
    defined = await traces.defined_unit_ids(session, batch.project, sorted(unknown))
    return [
        UNDEFINED_UNIT.format(case=case, field=field, unit=unit, project=batch.project)
        for case, field, unit in named
        if unit in unknown and unit not in defined
    ]
