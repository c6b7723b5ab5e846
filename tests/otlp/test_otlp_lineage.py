"""Lineage across traces and exports: one agent run of GenAI memory spans (one trace per turn,
written with the real OpenTelemetry SDK and sent by its OTLP exporter), exported once and once
per trace, must give the same graph and the same attributions."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from neo4j import Driver
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.trace import Tracer

from tests.support.graph import graph_counts
from tests.support.otlp_export import as_otlp_json, export, messages, records, span
from tests.support.servers import ServiceHandle

STORE = "alice-memories"
NAMES = {
    "query": "gen_ai.memory.query.text",
    "records": "gen_ai.memory.records",
    "record_id": "gen_ai.memory.record.id",
    "content": "memtrace.memory.content",
}

# (case id, question, expected answer, the error type and the operation it should be blamed on)
EXPECTED = {
    "sister": ("UpdateError", "update_memory sister"),
    "dog": ("DeletionError", "delete_memory dog"),
    "work": ("ExtractionError", "extract facts 1"),
    "hobby": ("RetrievalError", "search_memory hobby"),
    "hiking": ("ResponseError", "answer hiking"),
}


def _provider(service: ServiceHandle, project: str) -> TracerProvider:
    exporter = OTLPSpanExporter(
        endpoint=f"{service.url}/otlp/v1/traces",
        headers={"X-MemTrace-Project": project},
        timeout=120,
    )
    provider = TracerProvider(resource=Resource.create({"service.name": "alice-agent"}))
    provider.add_span_processor(BatchSpanProcessor(exporter, schedule_delay_millis=60_000))
    return provider


def _llm(tracer: Tracer, name: str, said: str, answer: str) -> None:
    with tracer.start_as_current_span(f"chat {name}") as span:
        span.set_attribute("gen_ai.operation.name", "chat")
        span.set_attribute("memtrace.operation.name", name)
        span.set_attribute("gen_ai.input.messages", messages(("user", said)))
        span.set_attribute("gen_ai.output.messages", messages(("assistant", answer)))


def _memory(tracer: Tracer, operation: str, name: str, **attributes: Any) -> None:
    """A GenAI memory span; ``attributes`` by the last part of their name (``records``)."""
    with tracer.start_as_current_span(name) as span:
        span.set_attribute("gen_ai.operation.name", operation)
        span.set_attribute("gen_ai.memory.store.id", STORE)
        for key, value in attributes.items():
            span.set_attribute(NAMES[key], value)


def _case(case_id: str, question: str, expected: str) -> dict[str, str]:
    return {
        "memtrace.case.id": case_id,
        "memtrace.case.question": question,
        "memtrace.case.expected_answer": expected,
        "memtrace.case.verdict": "failed",
    }


def _ask(
    tracer: Tracer, case_id: str, question: str, expected: str, found: str, answer: str
) -> None:
    """A question turn: the search (named after the case) and the answering call. The case is
    marked on the turn's own span, around them, where the agent knows the question."""
    with tracer.start_as_current_span(f"agent.ask {case_id}") as turn:
        for key, value in _case(case_id, question, expected).items():
            turn.set_attribute(key, value)
        _memory(
            tracer,
            "search_memory",
            f"search_memory {case_id}",
            query=question,
            records=found,
        )
        _llm(
            tracer,
            f"answer {case_id}",
            f"Question: {question}",
            answer,
        )


def agent_run(tracer: Tracer, end_of_turn: Callable[[], None]) -> None:
    """Alice's memory agent, one trace per turn; ``end_of_turn`` runs after each."""
    said = "Alice: my sister moved to Denver, my dog is Rex, I love hiking, I work at a bakery"
    with tracer.start_as_current_span("agent.turn 1"):
        _llm(
            tracer,
            "extract facts 1",
            said,
            '{"facts": ["Sister lives in Denver", "Dog is called Rex", "Loves hiking"]}',
        )
        _memory(
            tracer,
            "update_memory",
            "update_memory turn 1",
            records=records(
                ("sister", "Alice's sister lives in Denver"),
                ("dog", "Alice's dog is called Rex"),
                ("hobby", "Alice loves hiking"),
            ),
        )
    end_of_turn()
    # A tool-calling agent: the model rewrites a record by id, without searching first.
    with tracer.start_as_current_span("agent.turn 2"):
        _llm(tracer, "decide 2", "Alice: my sister got married.", "update sister")
        _memory(
            tracer,
            "update_memory",
            "update_memory sister",
            record_id="sister",
            content="Alice's sister is married",
        )
    end_of_turn()
    with tracer.start_as_current_span("agent.turn 3"):
        _llm(tracer, "decide 3", "Alice: my dog is ill today.", "delete dog")
        _memory(tracer, "delete_memory", "delete_memory dog", record_id="dog")
    end_of_turn()
    _ask(
        tracer,
        "sister",
        "Where does Alice's sister live?",
        "Denver",
        records(("sister", "Alice's sister is married")),
        "I do not know where she lives.",
    )
    end_of_turn()
    _ask(tracer, "dog", "What is Alice's dog called?", "Rex", records(), "I do not know.")
    end_of_turn()
    _ask(tracer, "work", "Where does Alice work?", "a bakery", records(), "I do not know.")
    end_of_turn()
    _ask(
        tracer,
        "hobby",
        "What does Alice love doing?",
        "hiking",
        records(("sister", "Alice's sister is married")),
        "I do not know.",
    )
    end_of_turn()
    _ask(
        tracer,
        "hiking",
        "Which outdoor activity does Alice love?",
        "hiking",
        records(("hobby", "Alice loves hiking")),
        "Swimming.",
    )
    end_of_turn()


@pytest.fixture
def projects(project: str) -> Iterator[tuple[str, str]]:
    yield project + "-once", project + "-per-trace"


def _attributions(client: httpx.Client, project: str) -> dict[str, tuple[str, str, str]]:
    found = {}
    for case_id in EXPECTED:
        result = client.post(f"/attribute/{case_id}", params={"project": project}).json()
        operation = (result.get("operation") or {}).get("name", "")
        found[case_id] = (result["status"], result.get("error_type") or "", operation)
    return found


def _graph(driver: Driver, project: str) -> set[tuple[str, str, str]]:
    """Every edge as (operation name, edge type, unit id): what an attribution walks."""
    rows, _, _ = driver.execute_query(
        "MATCH (o:Operation {project: $p})-[r]->(u:Unit) RETURN o.name AS op, type(r) AS t, "
        "u.id AS unit",
        p=project,
        database_="neo4j",
    )
    return {(r["op"], r["t"], r["unit"].split(":")[0]) for r in rows}


def test_an_agent_run_exported_once_or_per_trace_gives_the_same_attributions(
    service: ServiceHandle, client: httpx.Client, neo4j_driver: Driver, projects: tuple[str, str]
) -> None:
    once, per_trace = projects
    single = _provider(service, once)
    agent_run(single.get_tracer("alice"), lambda: None)
    assert single.force_flush(60_000)
    single.shutdown()
    several = _provider(service, per_trace)
    agent_run(several.get_tracer("alice"), lambda: several.force_flush(60_000))
    several.shutdown()

    assert graph_counts(neo4j_driver, once) == graph_counts(neo4j_driver, per_trace)
    assert _graph(neo4j_driver, once) == _graph(neo4j_driver, per_trace)
    expected = {case: ("attributed", *blamed) for case, blamed in EXPECTED.items()}
    assert _attributions(client, once) == expected
    assert _attributions(client, per_trace) == expected


# The same kind of run by hand, as protobuf exports: what a re-send or a late export does.

RECORD = {
    "gen_ai.operation.name": "update_memory",
    "gen_ai.memory.store.id": "m",
    "gen_ai.memory.record.id": "home",
}


def _write(trace: int, at: float, content: str) -> ExportTraceServiceRequest:
    attributes = {**RECORD, "memtrace.memory.content": content}
    return export(span(trace, 1, "update_memory home", at, attributes=attributes))


def _delete(trace: int, at: float) -> ExportTraceServiceRequest:
    attributes = {**RECORD, "gen_ai.operation.name": "delete_memory"}
    return export(span(trace, 1, "delete_memory home", at, attributes=attributes))


def _send(client: httpx.Client, request: ExportTraceServiceRequest, project: str) -> httpx.Response:
    return client.post(
        "/otlp/v1/traces",
        params={"project": project},
        content=request.SerializeToString(),
        headers={"content-type": "application/x-protobuf"},
    )


def _consumed(driver: Driver, project: str, trace: int) -> list[str]:
    rows, _, _ = driver.execute_query(
        "MATCH (:Operation {project: $p, id: $id})-[:CONSUMES]->(u:Unit) RETURN u.content AS c",
        p=project,
        id=f"otel:{trace:032x}:{1:016x}",
        database_="neo4j",
    )
    return [r["c"] for r in rows]


def _trace_nodes(driver: Driver, project: str) -> int:
    """Operations, units and cases: what an export writes (not the project's warnings log)."""
    rows, _, _ = driver.execute_query(
        "MATCH (n {project: $p}) WHERE n:Operation OR n:Unit OR n:Case RETURN count(n) AS n",
        p=project,
        database_="neo4j",
    )
    return int(rows[0]["n"])


def test_a_write_consumes_the_stored_version_before_it_and_re_sends_change_nothing(
    client: httpx.Client, project: str, neo4j_driver: Driver
) -> None:
    turns = [_write(1, 0, "Lives in Lisbon"), _write(2, 10, "Lives in Porto"), _delete(3, 20)]
    for turn in turns:
        assert _send(client, turn, project).status_code == 200
    assert _consumed(neo4j_driver, project, 2) == ["Lives in Lisbon"]
    assert _consumed(neo4j_driver, project, 3) == ["Lives in Porto"]
    after = graph_counts(neo4j_driver, project)
    for turn in reversed(turns):  # a retry, even after later turns: the same edges, no 409
        response = _send(client, turn, project)
        assert response.status_code == 200, response.text
    assert graph_counts(neo4j_driver, project) == after
    # After the deletion the record starts again: its next write consumes nothing.
    assert _send(client, _write(4, 30, "Lives in Faro"), project).status_code == 200
    assert _consumed(neo4j_driver, project, 4) == []


def test_a_case_on_a_wrapper_finds_its_answer_in_an_earlier_export(
    client: httpx.Client, project: str, neo4j_driver: Driver
) -> None:
    case = {
        "memtrace.case.id": "late",
        "memtrace.case.question": "Where does Alice live?",
        "memtrace.case.expected_answer": "Porto",
        "memtrace.case.verdict": "failed",
    }
    chat = {
        "gen_ai.operation.name": "chat",
        "gen_ai.input.messages": messages(("user", "Where does Alice live?")),
        "gen_ai.output.messages": messages(("assistant", "In Lisbon.")),
    }
    # The SDK exports a span when it ends: the answering call before the turn around it.
    answering = export(span(5, 2, "chat", 1.0, parent=1, attributes=chat))
    assert _send(client, answering, project).status_code == 200
    turn = export(span(5, 1, "agent.ask", 0.0, attributes=case))
    response = _send(client, turn, project)
    assert response.status_code == 200, response.text
    stored = client.get("/cases/late", params={"project": project}).json()
    answer = f"otel:{5:032x}:{2:016x}/answer/0"
    assert stored["answer_unit"] == answer
    assert _send(client, turn, project).status_code == 200  # a re-send finds the same answer

    before = _trace_nodes(neo4j_driver, project)
    lost = export(span(6, 1, "agent.ask", 0.0, attributes={**case, "memtrace.case.id": "lost"}))
    refused = _send(client, lost, project)
    assert refused.status_code == 422, refused.text
    assert "memtrace.case.id" in refused.json()["details"][0]["loc"]
    assert "lost" in refused.json()["message"]
    assert _trace_nodes(neo4j_driver, project) == before  # only the refusal is kept (its log)


def test_a_bad_memtrace_value_drops_that_attribute_with_a_warning(
    client: httpx.Client, project: str, neo4j_driver: Driver
) -> None:
    request = export(
        span(7, 1, "x", 0, attributes={"memtrace.operation.kind": "teleport"}),
        span(
            7,
            2,
            "y",
            1,
            attributes={
                "memtrace.inputs": "not a list",
                "memtrace.case.verdict": "?",
                "gen_ai.output.messages": messages(("assistant", "ok")),
            },
        ),
    )
    response = client.post(
        "/otlp/v1/traces", params={"project": project}, json=as_otlp_json(request)
    )
    assert response.status_code == 200, response.text
    warnings = response.json()["memtrace"]["warnings"]
    assert any("spans[0].attributes.memtrace.operation.kind: not one of" in w for w in warnings)
    assert any("spans[1].attributes.memtrace.inputs: not a list" in w for w in warnings)
    assert any("spans[1].attributes.memtrace.case.verdict: not one of" in w for w in warnings)
    assert response.json()["memtrace"]["created"]["operations"] == 2


def test_system_prompts_are_prompts_of_their_own_unless_named_and_messages_per_conversation(
    client: httpx.Client, project: str, neo4j_driver: Driver
) -> None:
    def chat(sid: int, system: str, said: str, **attributes: str) -> Any:
        return span(
            8,
            sid,
            "chat fake-chat",
            sid,
            attributes={
                "gen_ai.operation.name": "chat",
                "gen_ai.system_instructions": system,
                "gen_ai.input.messages": messages(("user", said)),
                **attributes,
            },
        )

    request = export(
        chat(1, "Extract facts.", "yes", **{"gen_ai.conversation.id": "c1"}),
        chat(2, "Answer the question.", "yes", **{"gen_ai.conversation.id": "c1"}),
        chat(3, "Extract facts.", "yes", **{"gen_ai.conversation.id": "c2"}),
        chat(4, "Answer briefly.", "no", **{"memtrace.prompt.name": "qa"}),
        chat(5, "Answer in full.", "no", **{"memtrace.prompt.name": "qa"}),
    )
    assert _send(client, request, project).status_code == 200
    prompts = client.get("/prompts", params={"project": project}).json()
    versions = {p["name"]: len(p["versions"]) for p in prompts}
    assert versions.pop("qa") == 2  # named: two versions of one prompt
    assert sorted(versions.values()) == [1, 1]  # unnamed: two texts, two prompts
    assert all(name.startswith("chat_fake-chat.system.") for name in versions)
    rows, _, _ = neo4j_driver.execute_query(
        "MATCH (u:Unit {project: $p, kind: 'message'}) RETURN u.content AS c, count(*) AS n",
        p=project,
        database_="neo4j",
    )
    # "yes" in c1 (read twice) and in c2: two messages; "no" in no conversation: one.
    assert {r["c"]: r["n"] for r in rows} == {"yes": 2, "no": 1}
