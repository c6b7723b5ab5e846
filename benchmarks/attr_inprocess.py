"""The attribution engine alone, in-process: no HTTP, no Neo4j.

:class:`BatchSource` serves the rows the repository would (``cases/ancestors``,
``attribution/descendants``, ``attribution/source_messages``, same projection) from a batch held
in memory, so ``service.attribution.engine.attribute`` runs unchanged. What this measures is the
walk and the judge; the difference to the HTTP figures is the service and the graph store.
"""

from __future__ import annotations

import json
import time
from collections import defaultdict
from collections.abc import Callable
from datetime import datetime
from typing import Any

from benchmarks.attr_run import CaseRef, Dataset, record_of
from benchmarks.flatlog import batch_units
from service.attribution.engine import attribute
from service.attribution.graph import CaseGraph
from service.attribution.judges.base import CachedJudge, Judge
from service.attribution.search import rank_messages
from service.attribution.walk import CaseFacts


def _when(value: Any) -> datetime | None:
    return datetime.fromisoformat(str(value).replace("Z", "+00:00")) if value else None


class BatchSource:
    """One project's graph in memory, answering as the repository does."""

    def __init__(self, batch: dict[str, Any]) -> None:
        self.rows: dict[str, dict[str, Any]] = {}
        self.producers: dict[str, list[str]] = defaultdict(list)
        self.consumers: dict[str, list[str]] = defaultdict(list)
        self.inputs: dict[str, list[str]] = {}
        self.outputs: dict[str, list[str]] = {}
        for uid, unit in batch_units(batch).items():
            self.rows[uid] = {
                "id": uid,
                "kind": unit.get("kind"),
                "name": None,
                "content": unit.get("content"),
                "ts": _when(unit.get("ts")),
                "attributes": json.dumps(unit.get("attributes") or {}),
                "is_operation": False,
                "edges": [],
            }
        for op in batch["operations"]:
            ins = [r["id"] if isinstance(r, dict) else r for r in op.get("inputs", [])]
            outs = [r["id"] if isinstance(r, dict) else r for r in op.get("outputs", [])]
            self.inputs[op["id"]], self.outputs[op["id"]] = ins, outs
            for uid in ins:
                self.consumers[uid].append(op["id"])
            for uid in outs:
                self.producers[uid].append(op["id"])
            edges = [["CONSUMES", u, i] for i, u in enumerate(ins)]
            edges += [["PRODUCES", u, i] for i, u in enumerate(outs)]
            self.rows[op["id"]] = {
                "id": op["id"],
                "kind": op.get("kind"),
                "name": op.get("name"),
                "content": None,
                "ts": _when(op.get("ts")),
                "attributes": json.dumps(op.get("attributes") or {}),
                "is_operation": True,
                "edges": edges,
            }
        self.messages = [
            (uid, row["content"] or "")
            for uid, row in self.rows.items()
            if not row["is_operation"] and row["kind"] == "message"
        ]

    def _walk(self, start: list[str], up: bool) -> list[dict[str, Any]]:
        """Units and operations reachable from ``start`` (included) towards the sources (up) or
        the sinks (down)."""
        seen: dict[str, None] = {}
        stack = [u for u in start if u in self.rows]
        while stack:
            node = stack.pop()
            if node in seen:
                continue
            seen[node] = None
            if self.rows[node]["is_operation"]:
                stack.extend((self.inputs if up else self.outputs)[node])
            else:
                stack.extend((self.producers if up else self.consumers).get(node, []))
        return [self.rows[n] for n in seen if n in self.rows]

    def ancestors(self, unit_id: str) -> list[dict[str, Any]]:
        return self._walk([unit_id], up=True)

    async def descendants(self, unit_ids: list[str]) -> list[dict[str, Any]]:
        return self._walk(unit_ids, up=False)

    async def search_messages(self, query: str, k: int) -> list[tuple[str, str]]:
        text = dict(self.messages)
        return [(mid, text[mid]) for mid in rank_messages(self.messages, query, k)]


async def attribute_in_process(
    dataset: Dataset, row: str, make_judge: Callable[[], Judge]
) -> tuple[list[dict[str, Any]], float]:
    """Attribute every case of ``dataset`` one after the other; records and wall seconds."""
    sources = {item.batch["project"]: BatchSource(item.batch) for item in dataset.batches}
    cases = {
        (item.batch["project"], case["id"]): case
        for item in dataset.batches
        for case in item.batch["cases"]
    }
    records = []
    started = time.perf_counter()
    for ref in dataset.cases():
        records.append(await _one(ref, row, cases[(ref.project, ref.case_id)], sources, make_judge))
    return records, time.perf_counter() - started


async def _one(
    ref: CaseRef,
    row: str,
    case: dict[str, Any],
    sources: dict[str, BatchSource],
    make_judge: Callable[[], Judge],
) -> dict[str, Any]:
    started = time.perf_counter()
    source = sources[ref.project]
    graph = CaseGraph()
    graph.add_rows(source.ancestors(case["answer_unit"]))
    facts = CaseFacts(
        id=case["id"],
        question=case["question"],
        expected_answer=case["expected_answer"],
        verdict=case["verdict"],
        answer_unit=case["answer_unit"],
        evidence_units=tuple(case.get("evidence_units") or ()),
    )
    judge = make_judge()
    try:
        result = await attribute(facts, graph, CachedJudge(judge), source)
    finally:
        close = getattr(judge, "aclose", None)
        if close is not None:
            await close()
    return record_of(ref, row, result.model_dump(mode="json"), time.perf_counter() - started)
