"""The attribution benchmark's moving parts: datasets in projects, ingestion, attribution requests.

A :class:`Dataset` is a named list of labelled batches, each moved into a project of its own. Every
labelled failed case becomes a :class:`CaseRef`; :func:`attribute_all` posts ``/attribute`` for
each, ``concurrency`` at a time, and returns one flat record per case (JSON-ready).
"""

from __future__ import annotations

import asyncio
import json
import statistics
import time
from dataclasses import dataclass
from typing import Any

import httpx

from benchmarks.attribution.flatlog import Job, OperationLog, batch_units, operation_log
from benchmarks.datasets import Label, LabelledBatch

MAX_BATCH_BYTES = 8 * 1024 * 1024
MAX_BATCH_OPERATIONS = 10_000


@dataclass(frozen=True)
class CaseRef:
    """One labelled failed case and where it lives."""

    dataset: str
    project: str
    case_id: str
    label: Label
    category: str = ""  # LoCoMo's question category; empty for synthetic cases
    half: str = ""  # LoCoMo: "tune" (conversations 0-4) or "heldout" (5-9); empty for synthetic

    @property
    def key(self) -> str:
        return f"{self.project}/{self.case_id}"


@dataclass
class Dataset:
    name: str
    batches: list[LabelledBatch]

    def cases(self) -> list[CaseRef]:
        return [
            CaseRef(
                self.name,
                item.batch["project"],
                case["id"],
                item.labels[case["id"]],
                str((case.get("attributes") or {}).get("category", "")),
                str(item.hidden.get("half", "")),
            )
            for item in self.batches
            for case in item.batch["cases"]
            if case["id"] in item.labels
        ]

    def sizes(self) -> dict[str, Any]:
        """Operations and units per batch (min, mean, max), and labelled cases."""
        ops = [len(b.batch["operations"]) for b in self.batches]
        units = [len(batch_units(b.batch)) for b in self.batches]

        def span(values: list[int]) -> dict[str, float]:
            return {"min": min(values), "mean": round(statistics.mean(values)), "max": max(values)}

        return {
            "batches": len(self.batches),
            "operations": span(ops),
            "units": span(units),
            "cases": len(self.cases()),
        }

    def flatlog_jobs(self) -> list[Job]:
        """One baseline job per case; each batch's log is built once and shared."""
        jobs = []
        for item in self.batches:
            log: OperationLog = operation_log(item.batch)
            units = batch_units(item.batch)
            for case in item.batch["cases"]:
                if case["id"] in item.labels:
                    wrong = units.get(case["answer_unit"], {}).get("content") or ""
                    jobs.append(Job(f"{item.batch['project']}/{case['id']}", log, case, wrong))
        return jobs


def in_project(item: LabelledBatch, project: str) -> LabelledBatch:
    """The same labelled batch, moved into ``project``."""
    return LabelledBatch({**item.batch, "project": project}, item.labels, item.hidden)


def split_batch(batch: dict[str, Any]) -> list[dict[str, Any]]:
    """Parts within the service's limits: units, then operations, then cases, in order.

    Ids may be referenced before the part defining them arrives, so any cut is valid.
    """
    budget = MAX_BATCH_BYTES * 3 // 4
    if len(json.dumps(batch)) < budget and len(batch["operations"]) <= MAX_BATCH_OPERATIONS:
        return [batch]
    parts: list[dict[str, Any]] = []
    current: dict[str, Any] = {"units": [], "operations": [], "cases": []}
    size = 0
    for key in ("units", "operations", "cases"):
        for item in batch.get(key, []):
            n = len(json.dumps(item))
            if size + n > budget or len(current["operations"]) >= MAX_BATCH_OPERATIONS:
                parts.append(current)
                current, size = {"units": [], "operations": [], "cases": []}, 0
            current[key].append(item)
            size += n
    parts.append(current)
    return [{"project": batch["project"], **part} for part in parts]


def ingest(client: httpx.Client, items: list[LabelledBatch]) -> float:
    """POST every batch (split when over the limits); seconds taken."""
    started = time.perf_counter()
    for item in items:
        for part in split_batch(item.batch):
            response = client.post("/traces", json=part)
            if response.status_code != 200:
                raise RuntimeError(f"ingest {item.batch['project']}: {response.text[:500]}")
    return time.perf_counter() - started


def case_fields(ref: CaseRef, row: str) -> dict[str, Any]:
    """The part of a record that names the case, its label and the row (judge) measured."""
    return {
        "dataset": ref.dataset,
        "project": ref.project,
        "case_id": ref.case_id,
        "system": ref.label["system"],
        "label_type": ref.label["error_type"],
        "label_op": ref.label["operation_id"],
        "category": ref.category,
        "half": ref.half,
        "judge": row,
    }


def record_of(
    ref: CaseRef, row: str, result: dict[str, Any] | None, latency: float, error: str = ""
) -> dict[str, Any]:
    """One flat record: the case, its label, and the attribution ``result`` (None: failed)."""
    record = {**case_fields(ref, row), "latency": round(latency, 4)}
    if result is None:
        return {**record, "status": "error", "error_type": None, "op_id": None, "reason": error}
    operation = result.get("operation") or {}
    cost = result.get("cost") or {}
    searched = result.get("searched") or {}
    return {
        **record,
        "status": result["status"],
        "error_type": result.get("error_type"),
        "op_id": operation.get("id"),
        "op_kind": operation.get("kind"),
        "confidence": result.get("confidence"),
        "reason": result.get("reason"),
        "evidence_path": result.get("evidence_path"),
        "evidence": result.get("evidence"),
        "searched_units": searched.get("units"),
        "searched_operations": searched.get("operations"),
        "llm_calls": cost.get("llm_calls", 0),
        "input_tokens": cost.get("input_tokens", 0),
        "output_tokens": cost.get("output_tokens", 0),
        "seconds": cost.get("seconds", 0.0),
        "llm_verdicts": (result.get("judge") or {}).get("llm_verdicts", 0),
        "llm_failures": (result.get("judge") or {}).get("llm_failures", 0),
    }


async def attribute_all(
    url: str,
    judge: str,
    cases: list[CaseRef],
    *,
    concurrency: int,
    row: str | None = None,
    max_llm_calls: int | None = None,
) -> tuple[list[dict[str, Any]], float]:
    """``POST /attribute`` (refresh) for every case; records in case order and wall seconds.

    ``judge`` is what the request asks for (heuristic or llm); ``row`` names the result row.
    """
    body: dict[str, Any] = {"judge": judge, "refresh": True}
    if max_llm_calls is not None:
        body["max_llm_calls"] = max_llm_calls
    gate = asyncio.Semaphore(concurrency)
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)

    async with httpx.AsyncClient(base_url=url, timeout=300, limits=limits) as client:

        async def one(ref: CaseRef) -> dict[str, Any]:
            async with gate:
                started = time.perf_counter()
                try:
                    response = await client.post(
                        f"/attribute/{ref.case_id}", params={"project": ref.project}, json=body
                    )
                except httpx.HTTPError as e:
                    latency = time.perf_counter() - started
                    return record_of(ref, row or judge, None, latency, f"{type(e).__name__}: {e}")
                latency = time.perf_counter() - started
                if response.status_code != 200:
                    return record_of(ref, row or judge, None, latency, response.text[:300])
                return record_of(ref, row or judge, response.json(), latency)

        started = time.perf_counter()
        records = await asyncio.gather(*(one(ref) for ref in cases))
        return list(records), time.perf_counter() - started
