"""Importing execution graphs in the MemTrace paper's format (MemTraceBench, smartcomment's
ExecNetwork export) as one trace batch each."""

from __future__ import annotations

from typing import Any

import anyio
from neo4j import AsyncSession
from pydantic import ValidationError

from ingest.execution_graph import convert_execution_graph
from service.errors import InvalidInput
from service.imports.models import ImportResult
from service.settings import Settings
from service.traces.models import TraceBatch
from service.traces.service import ingest_batch

GROUND_TRUTH_KEY = "ground_truth"
"""Case attribute holding an annotation's labels. The attribution never reads case attributes;
benchmarks read it to score attributions with the paper's two metrics."""


def prepare_batch(
    graph: dict[str, Any], project: str, id_prefix: str | None
) -> tuple[TraceBatch, int, list[str]]:
    """Convert and validate ``graph`` (CPU only): the batch, how many cases carry labels, and
    the warnings. Raises ``InvalidInput`` naming what was wrong and where."""
    try:
        imported = convert_execution_graph(graph, project, source="body", id_prefix=id_prefix)
    except ValueError as e:
        raise InvalidInput(str(e), details=[{"loc": ["body"], "msg": str(e)}]) from e
    for case in imported.batch.get("cases", []):
        label = imported.labels.get(case["id"])
        if label:
            case["attributes"] = {**case.get("attributes", {}), GROUND_TRUTH_KEY: label}
    try:
        batch = TraceBatch.model_validate(imported.batch)
    except ValidationError as e:
        details = [{"loc": list(err["loc"]), "msg": err["msg"]} for err in e.errors()]
        raise InvalidInput("the converted graph is not a valid trace batch", details=details) from e
    return batch, len(imported.labels), imported.warnings


async def import_execution_graph(
    session: AsyncSession,
    graph: dict[str, Any],
    project: str,
    id_prefix: str | None,
    settings: Settings,
) -> ImportResult:
    """Convert ``graph`` and write it like any batch (atomic, idempotent, 409 on redefinition).

    The conversion runs in a worker thread: a graph of many megabytes takes CPU time that must
    not stop the event loop from answering other requests (``/readyz`` among them).
    """
    batch, labelled, warnings = await anyio.to_thread.run_sync(
        prepare_batch, graph, project, id_prefix
    )
    ingested = await ingest_batch(session, batch, settings)
    return ImportResult(ingested=ingested, labelled_cases=labelled, warnings=warnings)
