"""Exports at and over the documented limits (10,000 spans, 8 MiB): one at the limit is stored,
though one transaction for all of it would need more memory than Neo4j lets one use (the tests'
Neo4j: a 1 GB heap, 256 MB per transaction); one over the span limit is a 413 naming the limit,
before any span is converted. A batch too large for one transaction is written in several: the
graph is the one a single transaction writes, a re-send changes nothing, a redefinition writes
nothing (a service writing 40 rows per transaction shows it on a small agent run)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from neo4j import Driver
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from tests.support.graph import graph_snapshot
from tests.support.otlp_export import as_otlp_json, export, messages, records, span
from tests.support.servers import Neo4jHandle, ServiceHandle, run_service

PROTOBUF = {"content-type": "application/x-protobuf"}
LIMIT = 10_000  # MEMTRACE_MAX_BATCH_OPERATIONS' default, the documented limit
RECORDS = 3


def searches(count: int) -> ExportTraceServiceRequest:
    """``count`` ``search_memory`` spans, one trace each, each reading ``RECORDS`` records (of
    5,000 distinct ones: searches read the same versions again)."""
    return export(
        *(
            span(
                i + 1,
                1,
                "search_memory",
                i / 1000,
                attributes={
                    "gen_ai.operation.name": "search_memory",
                    "gen_ai.memory.store.id": "mem0",
                    "gen_ai.memory.query.text": f"What does the user think about topic {i}?",
                    "gen_ai.memory.records": records(
                        *(
                            (f"r{n % 5000}", f"fact {n % 5000} about the user's preferences")
                            for n in range(i * RECORDS, (i + 1) * RECORDS)
                        )
                    ),
                },
            )
            for i in range(count)
        )
    )


def _count(driver: Driver, project: str, label: str, kind: str | None = None) -> int:
    rows, _, _ = driver.execute_query(
        f"MATCH (n:{label} {{project: $p}}) WHERE $kind IS NULL OR n.kind = $kind "
        "RETURN count(n) AS n",
        p=project,
        kind=kind,
        database_="neo4j",
    )
    return int(rows[0]["n"])


def test_an_export_at_the_span_limit_is_stored(
    client: httpx.Client, project: str, neo4j_driver: Driver
) -> None:
    body = searches(LIMIT).SerializeToString()
    assert len(body) < 8 * 1024 * 1024  # within the documented byte limit too
    response = client.post(
        "/otlp/v1/traces", params={"project": project}, content=body, headers=PROTOBUF, timeout=600
    )
    assert response.status_code == 200, response.text[:500]
    assert _count(neo4j_driver, project, "Operation", "retrieval") == LIMIT
    assert _count(neo4j_driver, project, "Unit", "query") == LIMIT
    assert _count(neo4j_driver, project, "Unit", "context") == LIMIT * RECORDS
    assert _count(neo4j_driver, project, "Unit", "memory") == 5000
    consumed, _, _ = neo4j_driver.execute_query(
        "MATCH (:Operation {project: $p})-[r:CONSUMES]->() RETURN count(r) AS n",
        p=project,
        database_="neo4j",
    )
    assert consumed[0]["n"] == LIMIT * (1 + RECORDS)


@pytest.mark.parametrize("encoding", ["protobuf", "json"])
def test_an_export_over_the_span_limit_is_413_naming_it(
    client: httpx.Client, project: str, neo4j_driver: Driver, encoding: str
) -> None:
    request = export(*(span(1, i + 1, "step", i / 1000) for i in range(LIMIT + 1)))
    if encoding == "protobuf":
        sent = client.post(
            "/otlp/v1/traces",
            params={"project": project},
            content=request.SerializeToString(),
            headers=PROTOBUF,
        )
    else:
        sent = client.post(
            "/otlp/v1/traces", params={"project": project}, json=as_otlp_json(request)
        )
    assert sent.status_code == 413, sent.text[:500]
    error = sent.json()
    assert error["error"] == "payload_too_large"
    assert f"{LIMIT + 1} spans" in error["message"]
    assert f"the limit is {LIMIT} spans" in error["message"]
    assert error["details"] == [
        {"loc": ["body"], "msg": f"over the limit of {LIMIT} spans", "max_spans": LIMIT}
    ]
    assert _count(neo4j_driver, project, "Operation") == 0


@pytest.fixture(scope="module")
def small_transactions(neo4j: Neo4jHandle, workdir: Path) -> Iterator[ServiceHandle]:
    """The service writing at most 40 rows per transaction: every export is split."""
    with run_service(
        neo4j.uri,
        workdir,
        MEMTRACE_NEO4J_USER=neo4j.user,
        MEMTRACE_NEO4J_PASSWORD=neo4j.password,
        MEMTRACE_WRITE_TRANSACTION_ROWS="40",
    ) as handle:
        yield handle


def _chat(turn: int, sid: int, name: str, said: str, answer: str, case: bool = False) -> Span:
    """An LLM call of ``turn``'s trace, at second ``sid - 1`` of it; ``case``: marked failed."""
    attributes = {
        "gen_ai.operation.name": "chat",
        "gen_ai.input.messages": messages(("user", said)),
        "gen_ai.output.messages": messages(("assistant", answer)),
    }
    if case:
        attributes |= {
            "memtrace.case.id": f"case-{turn}",
            "memtrace.case.question": said,
            "memtrace.case.verdict": "failed",
        }
    return span(turn + 1, sid, name, turn * 10.0 + sid - 1, parent=1, attributes=attributes)


def agent_run() -> ExportTraceServiceRequest:
    """Eight turns of a memory agent in one export: fact extraction and memory writes (of
    records the export has not seen: looked up in the store), searches, answers, a deletion and
    a case."""
    spans = []
    for turn in range(8):
        record = f"fact-{turn % 3}"
        at = turn * 10.0
        spans += [
            span(turn + 1, 1, "agent.turn", at),
            _chat(turn, 2, "chat extract", f"Alice said thing {turn}", f"fact {turn}"),
            span(
                turn + 1,
                3,
                "update_memory",
                at + 2,
                parent=1,
                attributes={
                    "gen_ai.operation.name": "delete_memory" if turn == 5 else "update_memory",
                    "gen_ai.memory.store.id": "m",
                    "gen_ai.memory.record.id": record,
                    "memtrace.memory.content": f"Alice fact {turn}",
                },
            ),
            span(
                turn + 1,
                4,
                "search_memory",
                at + 3,
                parent=1,
                attributes={
                    "gen_ai.operation.name": "search_memory",
                    "gen_ai.memory.store.id": "m",
                    "gen_ai.memory.query.text": f"question {turn}",
                    "gen_ai.memory.records": records((record, f"Alice fact {turn}")),
                },
            ),
            _chat(turn, 5, "chat answer", f"question {turn}", f"answer {turn}", case=turn == 7),
        ]
    return export(*spans)


def test_a_batch_written_in_parts_is_the_graph_of_one_transaction(
    client: httpx.Client,
    small_transactions: ServiceHandle,
    neo4j_driver: Driver,
    project: str,
) -> None:
    whole, parts = project + "-whole", project + "-parts"
    body = agent_run().SerializeToString()
    written = client.post(
        "/otlp/v1/traces", params={"project": whole}, content=body, headers=PROTOBUF
    )
    assert written.status_code == 200, written.text[:500]
    graph = graph_snapshot(neo4j_driver, whole)
    assert len(graph[0]) + len(graph[1]) > 3 * 40  # the other service writes it in parts

    with httpx.Client(base_url=small_transactions.url, timeout=60) as split:
        for _ in range(2):  # written in parts, then a re-send
            sent = split.post(
                "/otlp/v1/traces", params={"project": parts}, content=body, headers=PROTOBUF
            )
            assert sent.status_code == 200, sent.text[:500]
            assert graph_snapshot(neo4j_driver, parts) == graph
        json_sent = split.post(
            "/otlp/v1/traces", params={"project": parts}, json=as_otlp_json(agent_run())
        )
        counts = json_sent.json()["memtrace"]
        assert counts["created"] == {"units": 0, "operations": 0, "cases": 0}
        assert counts["existing"]["operations"] == 40

        # A batch of parts whose last one redefines a stored unit: refused, none of it written.
        units = [{"id": f"new-{i}", "kind": "message", "content": str(i)} for i in range(60)]
        stored = "otel:00000000000000000000000000000001:0000000000000004/query"
        batch = {
            "project": parts,
            "operations": [
                {
                    "id": f"read-{i}",
                    "name": "read",
                    "kind": "retrieval",
                    "ts": "2026-05-01T10:00:00Z",
                    "inputs": [unit],
                    "outputs": [],
                }
                for i, unit in enumerate(units)
            ],
            "units": [{"id": stored, "kind": "query", "content": "something else"}],
        }
        refused = split.post("/traces", json=batch)
        assert refused.status_code == 409, refused.text[:500]
        assert refused.json()["details"] == [
            {"loc": ["units", stored], "msg": "already names something different"}
        ]
        assert graph_snapshot(neo4j_driver, parts) == graph


def extractions(project: str, count: int) -> dict[str, Any]:
    """A ``POST /traces`` batch of ``count`` extractions, each from a message to three facts."""
    return {
        "project": project,
        "operations": [
            {
                "id": f"extract-{i}",
                "name": "extract_facts",
                "kind": "extraction",
                "ts": "2026-05-01T10:00:00Z",
                "inputs": [{"id": f"msg-{i}", "kind": "message", "content": f"Alice said {i}"}],
                "outputs": [
                    {"id": f"fact-{i}-{j}", "kind": "memory", "content": f"Alice fact {i}.{j}"}
                    for j in range(3)
                ],
            }
            for i in range(count)
        ],
    }


def test_a_batch_at_the_operation_limit_is_stored(
    client: httpx.Client, project: str, neo4j_driver: Driver
) -> None:
    batch = extractions(project, LIMIT)
    assert len(json.dumps(batch)) < 8 * 1024 * 1024
    response = client.post("/traces", json=batch, timeout=600)
    assert response.status_code == 200, response.text[:500]
    assert response.json()["created"] == {"units": 4 * LIMIT, "operations": LIMIT, "cases": 0}
    assert _count(neo4j_driver, project, "Operation") == LIMIT
    assert _count(neo4j_driver, project, "Unit", "memory") == 3 * LIMIT
