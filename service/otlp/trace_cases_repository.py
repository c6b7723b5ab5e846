"""Reading what a case recorded later by trace id is about: the trace's stored spans, and the
conversation and messages of the call that answered (``service.otlp.trace_cases``)."""

from __future__ import annotations

import json
from dataclasses import dataclass

from neo4j import AsyncManagedTransaction, AsyncSession

from cypher import query
from ingest.otlp_cases import Answerer, last_answerer
from service.db import store_errors
from service.otlp.lineage_repository import stored_answerer


@dataclass(frozen=True)
class TraceAnswer:
    """The answering call of a stored trace, as the store holds it."""

    span_id: str
    answer_unit: str
    conversation: str | None
    user_messages: tuple[str, ...]  # what it read from the user, in the order it read them


@dataclass(frozen=True)
class StoredTrace:
    """``spans``: how many of the trace's spans are stored; ``answer``: None when none answered."""

    spans: int
    answer: TraceAnswer | None


@store_errors
async def read_trace_answer(session: AsyncSession, project: str, trace_id: str) -> StoredTrace:
    """The trace's stored spans and the answer of its last answering call, read in one read
    transaction (so the call and its messages are of one state of the store)."""

    async def work(tx: AsyncManagedTransaction) -> StoredTrace:
        result = await tx.run(query("otlp/trace_answers"), project=project, traces=[trace_id])
        spans: list[Answerer] = [
            stored_answerer(record["id"], record["kind"], record) async for record in result
        ]
        last = last_answerer(spans)
        if last is None:
            return StoredTrace(len(spans), None)
        operation = f"otel:{trace_id}:{last.span_id}"
        record = await (
            await tx.run(query("otlp/answering_call"), project=project, operation=operation)
        ).single(strict=True)
        users = tuple(
            str(m["content"])
            for m in record["messages"]
            if json.loads(m["attributes"] or "{}").get("role") == "user"
        )
        return StoredTrace(
            len(spans), TraceAnswer(last.span_id, last.answers[0], record["session_id"], users)
        )

    return await session.execute_read(work)
