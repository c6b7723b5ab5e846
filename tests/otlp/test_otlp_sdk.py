"""OTLP from the real OpenTelemetry SDK: spans made with its tracer API, exported by its
OTLP/HTTP protobuf exporter (gzip on) to the running service, then attributed."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest
from neo4j import Driver
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

from tests.support.otlp_export import messages, records
from tests.support.servers import ServiceHandle


@pytest.fixture
def provider(service: ServiceHandle, project: str) -> Iterator[TracerProvider]:
    exporter = OTLPSpanExporter(
        endpoint=f"{service.url}/otlp/v1/traces",
        headers={"X-MemTrace-Project": project},
        compression=Compression.Gzip,
        timeout=120,  # a loaded CI machine can be slow; the SDK's 10 s default drops the batch
    )
    # A provider of our own, not the global one: tests must not leak exporters into each other.
    tracer_provider = TracerProvider(resource=Resource.create({"service.name": "sdk-agent"}))
    # The processor an application runs in production: spans are exported in batches, so a
    # trace's spans usually travel together (the lineage rules look within one export).
    tracer_provider.add_span_processor(BatchSpanProcessor(exporter, schedule_delay_millis=60_000))
    yield tracer_provider
    tracer_provider.shutdown()


def test_sdk_spans_are_stored_and_the_retrieval_is_blamed(
    provider: TracerProvider, client: httpx.Client, project: str, neo4j_driver: Driver
) -> None:
    tracer = provider.get_tracer("memtrace-test")
    with tracer.start_as_current_span("memory.add"):
        with tracer.start_as_current_span("chat extract facts") as span:
            span.set_attribute("gen_ai.operation.name", "chat")
            span.set_attribute(
                "gen_ai.input.messages", messages(("user", "Alice: my sister moved to Denver."))
            )
            span.set_attribute(
                "gen_ai.output.messages", messages(("assistant", "Alice's sister lives in Denver"))
            )
        with tracer.start_as_current_span("update_memory") as span:
            span.set_attribute("gen_ai.operation.name", "update_memory")
            span.set_attribute("gen_ai.memory.store.id", "mem0")
            span.set_attribute(
                "gen_ai.memory.records", records(("sister", "Alice's sister lives in Denver"))
            )
    with tracer.start_as_current_span("agent.turn"):
        with tracer.start_as_current_span("search_memory") as span:
            span.set_attribute("gen_ai.operation.name", "search_memory")
            span.set_attribute("gen_ai.memory.store.id", "mem0")
            span.set_attribute("gen_ai.memory.query.text", "Where does Alice's sister live?")
            span.set_attribute("gen_ai.memory.records", records(("hobby", "Alice likes hiking")))
        with tracer.start_as_current_span("chat answer") as span:
            span.set_attribute("gen_ai.operation.name", "chat")
            span.set_attribute(
                "gen_ai.input.messages", messages(("user", "Where does Alice's sister live?"))
            )
            span.set_attribute("gen_ai.output.messages", messages(("assistant", "I do not know.")))
            span.set_attribute("memtrace.case.id", "sister")
            span.set_attribute("memtrace.case.question", "Where does Alice's sister live?")
            span.set_attribute("memtrace.case.expected_answer", "Denver")
            span.set_attribute("memtrace.case.verdict", "failed")
    assert provider.force_flush(30_000)

    rows = neo4j_driver.execute_query(
        "MATCH (o:Operation {project: $p}) RETURN o.name AS name, o.kind AS kind, "
        "o.system AS system, o.attributes AS attrs",
        p=project,
    ).records
    kinds = {r["name"]: r["kind"] for r in rows}
    assert kinds == {
        "memory.add": "other",
        "chat extract facts": "extraction",
        "update_memory": "update",
        "agent.turn": "other",
        "search_memory": "retrieval",
        "chat answer": "response",
    }
    assert {r["system"] for r in rows} == {"sdk-agent"}
    search = next(r for r in rows if r["name"] == "search_memory")
    assert json.loads(search["attrs"])["otel"]["scope"]["name"] == "memtrace-test"

    result = client.post("/attribute/sister", params={"project": project}).json()
    assert result["status"] == "attributed", result
    assert (result["error_type"], result["operation"]["name"]) == (
        "RetrievalError",
        "search_memory",
    )


def test_an_exporter_pointed_at_the_otlp_root_is_heard(
    service: ServiceHandle, project: str, neo4j_driver: Driver
) -> None:
    """The exporter's ``endpoint=`` is used as given (no /v1/traces appended): /otlp works too,
    instead of a 404 that ``force_flush()`` reports as success."""
    exporter = OTLPSpanExporter(
        endpoint=f"{service.url}/otlp", headers={"X-MemTrace-Project": project}, timeout=60
    )
    tracer_provider = TracerProvider(resource=Resource.create({"service.name": "root-agent"}))
    tracer_provider.add_span_processor(BatchSpanProcessor(exporter))
    with tracer_provider.get_tracer("memtrace-test").start_as_current_span("root-step"):
        pass
    assert tracer_provider.force_flush(60_000)
    tracer_provider.shutdown()
    names = neo4j_driver.execute_query(
        "MATCH (o:Operation {project: $p}) RETURN o.name AS name", p=project
    ).records
    assert [r["name"] for r in names] == ["root-step"]
