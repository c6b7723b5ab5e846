"""Recording a verdict on a stored case."""

from __future__ import annotations

import json

from neo4j import AsyncManagedTransaction, AsyncSession

from cypher import query
from service.db import store_errors
from service.models.cases import CaseView
from service.repository.cases import read_case


@store_errors
async def record_verdict(
    session: AsyncSession,
    project: str,
    case_id: str,
    verdict: str,
    expected_answer: str | None,
    note: str | None,
) -> CaseView | None:
    """Set the case's verdict (and expected answer, and ``verdict_note`` attribute, when given)
    and return the case as stored; None when the project has no such case. Read and write run
    in one transaction, so the note is merged into the attributes the case has at that time."""

    async def work(tx: AsyncManagedTransaction) -> CaseView | None:
        case = await read_case(tx, project, case_id)
        if case is None:
            return None
        attributes = {**case.attributes, **({"verdict_note": note} if note is not None else {})}
        await tx.run(
            query("verdicts/record_verdict"),
            project=project,
            case_id=case_id,
            verdict=verdict,
            expected_answer=expected_answer,
            # Stored the way ingest stores attributes: canonical JSON, None when empty.
            attributes=json.dumps(attributes, sort_keys=True, separators=(",", ":"))
            if attributes
            else None,
        )
        return await read_case(tx, project, case_id)

    return await session.execute_write(work)
