"""Reading what an error report counts: one compact row per case, in one read transaction
within the report's time budget (``service.read_budget``)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from neo4j import AsyncSession, AsyncTransaction

from cypher import query
from service.llm.models import Cost
from service.neo4j_values import from_epoch_ms
from service.read_budget import Deadline, read_within


@dataclass(frozen=True)
class CaseRow:
    """A case as a report sees it. Attribution fields are None when the case has none stored."""

    case_id: str
    verdict: str
    system: str | None
    at: datetime | None
    status: str | None
    error_type: str | None
    operation_id: str | None
    operation_name: str | None
    operation_system: str | None
    prompt: str | None
    cost: Cost | None
    llm_judged: bool = False  # the attribution asked an llm judge
    on_llm: bool = False  # and took at least one verdict from the LLM


def _json_object(text: str | None) -> dict[str, Any]:
    """A stored JSON string as a dict; anything else (absent, not an object) as an empty one."""
    if not text:
        return {}
    try:
        value = json.loads(text)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def record_to_row(record: Any) -> CaseRow:
    """One record of ``reports/case_rows`` as a ``CaseRow``: the stored JSON strings (the
    attribution result, the operation's attributes) are read here, once."""
    result = _json_object(record["result"])
    blamed = result.get("operation") or {}
    prompt = _json_object(record["operation_attributes"]).get("prompt")
    return CaseRow(
        case_id=record["case_id"],
        verdict=record["verdict"],
        system=record["system"],
        at=from_epoch_ms(record["at_ms"]),
        status=record["status"],
        error_type=record["error_type"],
        operation_id=record["operation_id"] or blamed.get("id"),
        operation_name=record["operation_name"] or blamed.get("name"),
        operation_system=record["operation_system"],
        prompt=str(prompt) if prompt not in (None, "") else None,
        cost=Cost.model_validate(result.get("cost") or {}) if record["status"] else None,
        llm_judged=(result.get("judge") or {}).get("kind", "heuristic") != "heuristic",
        on_llm=(result.get("judge") or {}).get("llm_verdicts", 0) > 0,
    )


async def case_rows(
    session: AsyncSession,
    deadline: Deadline,
    project: str,
    system: str | None,
    since: datetime | None,
    until: datetime | None,
) -> list[CaseRow]:
    """Every case of ``project`` in the filters, with its attribution and blamed operation;
    ``ReadTimedOut`` past ``deadline``."""

    async def work(tx: AsyncTransaction) -> list[CaseRow]:
        result = await tx.run(
            query("reports/case_rows"), project=project, system=system, since=since, until=until
        )
        return [record_to_row(record) async for record in result]

    return await read_within(session, deadline, work)
