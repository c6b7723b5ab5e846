"""The attribution engine alone, in-process: no HTTP, no Neo4j.

:class:`BatchSource` serves what the repository would (``attribution/ancestors``,
``descendants``, ``scope_messages``: rows of the same projection, decoded by the repository's
``service.attribution.rows``) from a batch held in memory, so
``service.attribution.engine.attribute`` runs unchanged. What this measures is the walk and the
judge; the difference to the HTTP figures is the service and the graph store.

As in the service, ``MEMTRACE_EMBEDDINGS_BASE_URL`` (``Settings.embeddings_base_url``) fuses an
endpoint's embeddings with BM25 in the evidence search: each run makes its embedder
(``service.attribution.service.new_embedder``, its cache shared by the run's cases).
"""

from __future__ import annotations

import json
import time
from collections import defaultdict
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from benchmarks.attribution.flatlog import batch_units
from benchmarks.attribution.run import CaseRef, Dataset, record_of
from graph_schema import STORE_KEY, scope_names
from graph_schema.rules import QUOTED_KINDS, is_source_message, quotes
from service.attribution.engine import attribute
from service.attribution.graph import CaseGraph, NodeRead, ScopeMessage, ScopeRead
from service.attribution.judges.base import CachedJudge, Judge
from service.attribution.rows import node_read
from service.attribution.scope import (
    NEIGHBOURHOOD_KINDS,
    NEIGHBOURHOOD_STEPS,
    RECENT_OPERATIONS,
    Scope,
)
from service.attribution.search import EndpointEmbedder
from service.attribution.service import new_embedder
from service.attribution.walk import CaseFacts
from service.settings import Settings

SCOPE_LIMIT = 5000


def _canonical(attributes: dict[str, Any] | None) -> str | None:
    """Attributes as the service stores them (``ingest.rows``: sorted keys, no spaces)."""
    return json.dumps(attributes, sort_keys=True, separators=(",", ":")) if attributes else None


def _when(value: Any) -> datetime | None:
    return datetime.fromisoformat(str(value).replace("Z", "+00:00")) if value else None


class BatchSource:
    """One project's graph in memory, answering as the repository does: each node's row
    decoded once, as an attribution job's reads are. ``embedder``: the dense ranking fused with
    BM25 in the evidence search, as ``RepositorySource.embedder`` is in the service."""

    def __init__(self, batch: dict[str, Any], embedder: EndpointEmbedder | None = None) -> None:
        self.embedder = embedder
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
                "attributes": _canonical(unit.get("attributes")),
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
                "system": op.get("system"),
                "session_id": op.get("session_id"),
                "content": None,
                "ts": _when(op.get("ts")),
                "attributes": _canonical(op.get("attributes")),
                "is_operation": True,
                "edges": edges,
            }
        self.reads = {nid: node_read(row) for nid, row in self.rows.items()}
        # what a message read by each operation could quote (graph_schema.rules.quotes)
        self._quotable = {
            op: tuple(
                (self.rows[u]["kind"], self.rows[u].get("content") or "")
                for u in ins
                if u in self.rows and self.rows[u]["kind"] in QUOTED_KINDS
            )
            for op, ins in self.inputs.items()
        }
        self.messages = sorted(
            uid
            for uid, row in self.rows.items()
            if not row["is_operation"] and row["kind"] == "message"
        )

    def _walk(self, start: list[str], up: bool) -> list[NodeRead]:
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
        return [self.reads[n] for n in seen if n in self.reads]

    def ancestors(self, unit_id: str) -> list[NodeRead]:
        return self._walk([unit_id], up=True)

    async def descendants(self, unit_ids: list[str]) -> list[NodeRead]:
        return self._walk(unit_ids, up=False)

    def _names(self, node: str) -> dict[str, str | None]:
        attributes = self.rows[node]["attributes"]
        return scope_names(json.loads(attributes) if attributes else None)

    def _neighbourhood(self, scope: Scope) -> set[str]:
        """What ``service.attribution.scope_repository`` reads of ``attribution/neighbourhood``:
        the same rule (building operations of the scope's systems, the kinds a step goes
        through), kept in step with it by hand."""
        question_time = {"retrieval", "response", "evaluation"}
        seen, messages = set(scope.seeds), set[str]()
        if scope.stores:
            seen |= {
                uid
                for uid, row in self.rows.items()
                if not row["is_operation"] and self._names(uid)[STORE_KEY] in scope.stores
            }
        frontier = sorted(seen)
        for _ in range(NEIGHBOURHOOD_STEPS):
            ops = {
                op
                for uid in frontier
                for op in [*self.producers.get(uid, []), *self.consumers.get(uid, [])]
                if (self.rows[op]["kind"] or "") not in question_time
                and (not scope.systems or self.rows[op].get("system") in scope.systems)
            }
            found = sorted({u for op in ops for u in [*self.inputs[op], *self.outputs[op]]} - seen)
            frontier = []
            for uid in found:
                if len(seen) >= SCOPE_LIMIT:
                    return messages
                seen.add(uid)
                kind = self.rows[uid]["kind"] if uid in self.rows else None
                if kind == "message":
                    messages.add(uid)
                if kind in NEIGHBOURHOOD_KINDS:
                    frontier.append(uid)
        return messages

    async def scope_messages(self, scope: Scope) -> ScopeRead:
        """What ``cypher/attribution/scope_messages.cypher`` returns, computed in memory."""
        named = set(scope.attributes)
        near = self._neighbourhood(scope) if scope.unnamed else set()
        how = None
        if scope.unnamed and not near and not scope.lineage:
            near, how = self._recent(scope), "recent"

        def names(node: str) -> bool:
            return bool(named) and any(
                (key, value) in named for key, value in self._names(node).items() if value
            )

        def in_scope(op: str) -> bool:
            row = self.rows[op]
            if scope.systems and row.get("system") not in scope.systems:
                return False
            return row.get("session_id") in scope.sessions or names(op)

        out = []
        for uid in self.messages:
            row = self.rows[uid]
            readers = self.consumers.get(uid, [])
            if not (uid in near or any(in_scope(op) for op in readers) or names(uid)):
                continue
            makers = self.producers.get(uid, [])
            if not is_source_message(
                "message",
                [self.rows[o]["kind"] for o in makers],
                [
                    (self.rows[o]["kind"], quotes(row.get("content") or "", self._quotable[o]))
                    for o in readers
                ],
            ):
                continue
            recorded = row["ts"] or min((self.rows[o]["ts"] for o in readers), default=None)
            if scope.until is not None and recorded is not None and recorded > scope.until:
                continue
            out.append({**row, "ts": recorded})
        out.sort(key=lambda r: r["id"])
        out.sort(key=lambda r: r["ts"] or datetime.min.replace(tzinfo=UTC), reverse=True)
        nodes = [ScopeMessage(node_read(row).node, None) for row in out[:SCOPE_LIMIT]]
        return ScopeRead(nodes, cut=len(out) > SCOPE_LIMIT, scope=how)

    async def store_writes(self, scope: Scope) -> list[NodeRead]:
        """What ``cypher/attribution/store_write_ids`` lists, computed in memory: the scope's
        stores' versions and tombstones written by ``scope.until`` with their writers, the
        latest first (an operation without a time first, as Neo4j sorts nulls descending)."""
        if not scope.stores:
            return []
        writes = {
            (op, uid)
            for uid, row in self.rows.items()
            if not row["is_operation"] and self._names(uid)[STORE_KEY] in scope.stores
            for op in self.producers.get(uid, [])
            if scope.until is None
            or self.rows[op]["ts"] is None
            or self.rows[op]["ts"] <= scope.until
        }

        def latest_first(write: tuple[str, str]) -> tuple[bool, float, str, str]:
            ts = self.rows[write[0]]["ts"]
            return (ts is not None, -ts.timestamp() if ts else 0.0, *write)

        kept = sorted(writes, key=latest_first)[:SCOPE_LIMIT]
        ops, units = dict.fromkeys(op for op, _ in kept), dict.fromkeys(u for _, u in kept)
        return [self.reads[n] for n in [*ops, *units]]

    def _recent(self, scope: Scope) -> set[str]:
        """What ``attribution/recent_messages`` reads: the messages of the latest building
        operations of the scope's systems before the answer."""
        ops = [
            (row["ts"], op)
            for op, row in self.rows.items()
            if row["is_operation"]
            and (row["kind"] or "") not in {"retrieval", "response", "evaluation"}
            and (not scope.systems or row.get("system") in scope.systems)
            and (scope.until is None or row["ts"] <= scope.until)
        ]
        latest = [op for _, op in sorted(ops, reverse=True)[:RECENT_OPERATIONS]]
        return {
            u
            for op in latest
            for u in self.inputs[op]
            if self.rows.get(u, {}).get("kind") == "message"
        }


def merged(dataset: Dataset) -> dict[str, dict[str, Any]]:
    """One batch per project: a shared project's traces together, as the service holds them."""
    out: dict[str, dict[str, Any]] = {}
    for item in dataset.batches:
        project = item.batch["project"]
        whole = out.setdefault(
            project, {"project": project, "units": [], "operations": [], "cases": []}
        )
        for key in ("units", "operations", "cases"):
            whole[key] = whole[key] + item.batch.get(key, [])
    return out


async def attribute_in_process(
    dataset: Dataset, row: str, make_judge: Callable[[CaseRef], Judge], sample: int = 0
) -> tuple[list[dict[str, Any]], float]:
    """Attribute every case of ``dataset`` one after the other (``sample`` > 0: that many,
    evenly spaced in the dataset's order, for a slow real model); records and wall seconds.
    Embeddings as the settings say (none unless ``MEMTRACE_EMBEDDINGS_BASE_URL`` is set)."""
    embedder = new_embedder(Settings())
    sources = {project: BatchSource(batch, embedder) for project, batch in merged(dataset).items()}
    cases = {
        (item.batch["project"], case["id"]): case
        for item in dataset.batches
        for case in item.batch["cases"]
    }
    records = []
    started = time.perf_counter()
    refs = list(dataset.cases())
    if 0 < sample < len(refs):
        refs = [refs[i * len(refs) // sample] for i in range(sample)]
    try:
        for ref in refs:
            case = cases[(ref.project, ref.case_id)]
            records.append(await _one(ref, row, case, sources, make_judge))
    finally:
        if embedder is not None:
            await embedder.aclose()
    return records, time.perf_counter() - started


async def _one(
    ref: CaseRef,
    row: str,
    case: dict[str, Any],
    sources: dict[str, BatchSource],
    make_judge: Callable[[CaseRef], Judge],
) -> dict[str, Any]:
    started = time.perf_counter()
    source = sources[ref.project]
    graph = CaseGraph()
    graph.add(source.ancestors(case["answer_unit"]))
    facts = CaseFacts(
        id=case["id"],
        question=case["question"],
        expected_answer=case["expected_answer"],
        verdict=case["verdict"],
        answer_unit=case["answer_unit"],
        evidence_units=tuple(case.get("evidence_units") or ()),
    )
    judge = make_judge(ref)
    try:
        result = await attribute(facts, graph, CachedJudge(judge), source)
    finally:
        close = getattr(judge, "aclose", None)
        if close is not None:
            await close()
    record = record_of(ref, row, result.model_dump(mode="json"), time.perf_counter() - started)
    return {**record, "given_evidence": bool(facts.evidence_units)}
