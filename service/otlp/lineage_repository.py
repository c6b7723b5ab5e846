"""Writing an OTLP export whose lineage reaches into what earlier exports stored.

What one export cannot settle by itself (``ingest.otlp.Converted``): a memory write of a record
the export has not seen consumes the record's latest stored version (``lookups``), and a case
marked on a wrapper span whose answering span an earlier export carried gets that answer
(``pending``). Both are read in the transaction that writes the batch, so what the write links
to is what the store holds when it commits; the reads only look before each span's time and
keep what a stored operation already consumed, so re-sending an export changes nothing.
"""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any

from neo4j import AsyncManagedTransaction, AsyncSession

from cypher import query
from ingest.otlp_cases import Answerer, PendingCase, answering
from ingest.otlp_decode import where
from ingest.rows import batch_rows, split_rows
from service.db import store_errors, write_rerun
from service.errors import InvalidInput
from service.traces.models import IngestResult, TraceBatch
from service.traces.repository import write_batch, write_in


@store_errors
async def write_linked(
    session: AsyncSession,
    batch: TraceBatch,
    lookups: list[dict[str, str]],
    pending: list[PendingCase],
    max_weight: int,
) -> IngestResult:
    """Write ``batch`` with the stored versions ``lookups`` name and the stored answers of the
    ``pending`` cases; ``InvalidInput`` (nothing written) for a case whose answer is nowhere.

    In one transaction when the batch fits one (``write_batch``'s ``max_weight``). A larger one
    reads what it links to in a read transaction, then is written in parts by ``write_batch``:
    a version another export stores in between is not seen, as if that export came later (a
    re-send keeps what the stored operations consumed, so it still changes nothing)."""

    async def work(tx: AsyncManagedTransaction) -> IngestResult:
        return await write_in(tx, batch_rows(await _with_links(tx)))

    async def _with_links(tx: AsyncManagedTransaction) -> TraceBatch:
        versions = await _latest_versions(tx, batch.project, lookups)
        answers = await _stored_answers(tx, batch.project, pending)
        return _linked(batch, versions, answers)

    if len(split_rows(batch_rows(batch), max_weight)) == 1:
        return await write_rerun(session, work)
    linked = await session.execute_read(_with_links)
    return await write_batch(session, batch_rows(linked), max_weight)


async def _latest_versions(
    tx: AsyncManagedTransaction, project: str, lookups: list[dict[str, str]]
) -> dict[str, list[str]]:
    """Per operation id, the stored versions it consumes (``cypher/otlp/latest_versions``)."""
    if not lookups:
        return {}
    result = await tx.run(query("otlp/latest_versions"), project=project, rows=lookups)
    found: dict[str, list[str]] = defaultdict(list)
    async for record in result:
        found[record["op"]].extend(record["units"])
    return found


async def _stored_answers(
    tx: AsyncManagedTransaction, project: str, pending: list[PendingCase]
) -> dict[int, str]:
    """Per case index, its answer among its trace's stored spans and the export's; a case with
    none is refused (``ingest.otlp_cases`` says why not queued)."""
    if not pending:
        return {}
    traces = sorted({case.trace_id for case in pending})
    result = await tx.run(query("otlp/trace_answers"), project=project, traces=traces)
    stored: dict[str, list[Answerer]] = defaultdict(list)
    async for record in result:
        stored[record["trace"]].append(stored_answerer(record["id"], record["kind"], record))
    answers: dict[int, str] = {}
    missing = []
    for case in pending:
        answer = answering(case.span_id, [*stored[case.trace_id], *case.known])
        if answer is None:
            missing.append(case)
        else:
            answers[case.index] = answer
    if missing:
        raise InvalidInput(
            f"{len(missing)} case(s) marked on a span without an answer: neither the span nor a "
            "descendant of it, in this export or stored, produced one (mark the case on the "
            f"span of the answering call); first: {where(missing[0].loc)}, case "
            f"{missing[0].case_id!r}",
            details=[
                {
                    "loc": [*case.loc, "attributes", "memtrace.case.id"],
                    "msg": f"case {case.case_id!r}: no answer in span {case.span_id} or below",
                }
                for case in missing
            ],
        )
    return answers


def stored_answerer(op_id: str, kind: str | None, record: Any) -> Answerer:
    """A stored span as a possible answerer, from a row of ``cypher/otlp/trace_answers``."""
    otel = json.loads(record["attributes"] or "{}").get("otel", {})
    _, trace_id, span_id = op_id.split(":", 2)
    return Answerer(
        span_id,
        otel.get("parent_span_id"),
        (int(otel.get("start_time_unix_nano") or 0), trace_id, span_id),
        kind or "other",
        tuple(record["answers"]),
    )


def _linked(
    batch: TraceBatch, versions: dict[str, list[str]], answers: dict[int, str]
) -> TraceBatch:
    """``batch`` with the stored versions among its operations' inputs and its cases' answers;
    a copy, since a retried transaction starts again from the batch as converted."""
    operations = []
    for op in batch.operations:
        named = {x if isinstance(x, str) else x.id for x in (*op.inputs, *op.outputs)}
        extra = [v for v in versions.get(op.id, []) if v not in named]
        operations.append(op.model_copy(update={"inputs": [*op.inputs, *extra]}) if extra else op)
    cases = [
        case.model_copy(update={"answer_unit": answers[i]}) if i in answers else case
        for i, case in enumerate(batch.cases)
    ]
    return batch.model_copy(update={"operations": operations, "cases": cases})
