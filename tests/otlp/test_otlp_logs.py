"""``POST /otlp/v1/logs``: GenAI message events sent as log records, joined to their spans.

The official ``opentelemetry-instrumentation-openai-v2`` (2.4b0 with opentelemetry-util-genai
1.1b0) writes an LLM call's messages on its span only in ``SPAN_ONLY`` mode; in ``EVENT_ONLY``
mode they are a ``gen_ai.client.inference.operation.details`` log record with the span's trace
and span ids, sent by the SDK's log exporter on its own schedule. The memory agent of
``test_otlp_instrumentations`` is run in both modes against the scripted OpenAI server: logs
exported before the spans or after them, once at the end or once per trace, must give the graph
and the five attributions that span-only mode gives. Hand-made exports check the per-message
events of the older conventions (``gen_ai.user.message``, ``gen_ai.choice``, ...), re-sends,
bad bodies and a key for another project.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import openai
import pytest
from neo4j import Driver
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor
from opentelemetry.processor.baggage import BaggageSpanProcessor
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
    ExportLogsServiceRequest,
    ExportLogsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import BatchLogRecordProcessor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

from tests.otlp.test_otlp_instrumentations import ANSWERS, FACTS, UNSURE
from tests.support.graph import graph_snapshot
from tests.support.keyed import A_KEY, B_KEY, A, B
from tests.support.llm_server import scripted_llm
from tests.support.otel_agent import MemoryAgent, script
from tests.support.otlp_export import (
    as_otlp_logs_json,
    export,
    log_export,
    log_record,
    messages,
    records,
    span,
    span_id,
    trace_id,
)
from tests.support.servers import ServiceHandle

EXPECTED = {
    "q-dog": ("ExtractionError", "extraction", "dog"),
    "q-city": ("DeletionError", "deletion", "forget"),
    "q-job": ("UpdateError", "update", "chess"),
    "q-sister": ("RetrievalError", "retrieval", "q-sister"),
    "q-colour": ("ResponseError", "response", "q-colour"),
}
PROTOBUF = {"content-type": "application/x-protobuf"}


# The official instrumentation, as released, in its two content modes.


@dataclass
class Run:
    """One agent run: its project and the turn of each trace id."""

    project: str
    turns: dict[str, str]  # trace id (hex) -> the turn's label


def _run_agent(
    service: ServiceHandle,
    project: str,
    monkeypatch: pytest.MonkeyPatch,
    *,
    mode: str,
    export: str,
    logs_first: bool,
) -> Run:
    """The memory agent with the official instrumentation in ``mode`` (``SPAN_ONLY`` or
    ``EVENT_ONLY``), its spans and log records sent by the SDK's OTLP/HTTP exporters, once at
    the end or once per trace, the log records before the spans or after them."""
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", mode)
    headers = {"X-MemTrace-Project": project}
    tracing = TracerProvider(resource=Resource.create({"service.name": "memory-agent"}))
    tracing.add_span_processor(BaggageSpanProcessor(lambda key: key.startswith("memtrace.")))
    tracing.add_span_processor(
        BatchSpanProcessor(
            OTLPSpanExporter(
                endpoint=f"{service.url}/otlp/v1/traces", headers=headers, timeout=120
            ),
            schedule_delay_millis=60_000,
        )
    )
    # What a user adds for the log records (docs/sdk.md): a LoggerProvider with an OTLP/HTTP
    # log exporter pointed at /otlp/v1/logs, given to the instrumentor.
    logging = LoggerProvider(resource=Resource.create({"service.name": "memory-agent"}))
    logging.add_log_record_processor(
        BatchLogRecordProcessor(
            OTLPLogExporter(endpoint=f"{service.url}/otlp/v1/logs", headers=headers, timeout=120),
            schedule_delay_millis=60_000,
        )
    )
    flushes = [logging, tracing] if logs_first else [tracing, logging]

    def flush() -> None:
        for provider in flushes:
            assert provider.force_flush(120_000)

    instrumentor = OpenAIInstrumentor()
    instrumentor.instrument(tracer_provider=tracing, logger_provider=logging)
    try:
        with scripted_llm(script(FACTS, ANSWERS)) as llm:
            agent = MemoryAgent(
                openai.OpenAI(base_url=llm.base_url, api_key="scripted", max_retries=0),
                tracing.get_tracer("memory-agent"),
                after_turn=flush if export == "per_trace" else None,
            )
            agent.remember("dog", "pet", "My dog is called Rex and he loves the beach.")
            agent.remember("city", "home", "I live in Lisbon.")
            agent.remember("sister", "sibling", "My sister moved to Denver last year.")
            agent.remember("music", "sister-music", "My sister loves live music.")
            agent.remember("colour", "colour", "My favourite colour is green.")
            agent.remember("job", "job", "I work at Acme.")
            agent.remember("chess", "job", "I started playing chess.")
            agent.forget("forget", "home")
            agent.ask("q-dog", "What is my dog called?", "Rex")
            agent.ask("q-city", "Which city do I live in?", "Lisbon")
            agent.ask("q-job", "Where do I work?", "Acme")
            agent.ask("q-sister", "Where does my sister live?", "Denver")
            agent.ask("q-colour", "What is my favourite colour?", "green")
        flush()
    finally:
        instrumentor.uninstrument()
        tracing.shutdown()
        logging.shutdown()
    return Run(project, {f"{t:032x}": label for label, t in agent.traces.items()})


def _attributions(client: httpx.Client, run: Run) -> dict[str, tuple[str, str, str]]:
    found = {}
    for case_id in EXPECTED:
        result = client.post(f"/attribute/{case_id}", params={"project": run.project}).json()
        status = "inconclusive" if case_id in UNSURE else "attributed"
        assert result.get("status") == status, (case_id, result)
        blamed = result["operation"]
        turn = run.turns[blamed["id"].split(":")[1]]
        found[case_id] = (result["error_type"], blamed["kind"], turn)
    return found


def _shape(driver: Driver, run: Run) -> list[tuple[Any, ...]]:
    """Every operation as its turn, name and kind with the units it consumed and produced (kind
    and text), and every case with its answer's text: the graph, with the ids (which hold
    each run's own trace ids) left out."""
    rows, _, _ = driver.execute_query(
        "MATCH (o:Operation {project: $p}) "
        "OPTIONAL MATCH (o)-[c:CONSUMES]->(i:Unit) "
        "WITH o, i ORDER BY c.position "
        "WITH o, collect([i.kind, i.content]) AS ins "
        "OPTIONAL MATCH (o)-[r:PRODUCES]->(x:Unit) "
        "WITH o, ins, x ORDER BY r.position "
        "RETURN o.id AS id, o.name AS name, o.kind AS kind, o.idle AS idle, ins, "
        "collect([x.kind, x.content]) AS outs",
        p=run.project,
        database_="neo4j",
    )
    operations = [
        (
            run.turns[r["id"].split(":")[1]],
            r["name"],
            r["kind"],
            r["idle"],
            json.dumps(r["ins"]),
            json.dumps(r["outs"]),
        )
        for r in rows
    ]
    cases, _, _ = driver.execute_query(
        "MATCH (c:Case {project: $p})-[:ANSWERED_BY]->(a:Unit) "
        "RETURN c.id AS id, a.content AS answer, a.kind AS kind",
        p=run.project,
        database_="neo4j",
    )
    return sorted(operations) + sorted(("case", r["id"], r["kind"], r["answer"]) for r in cases)


@pytest.fixture(scope="module")
def span_only(service: ServiceHandle, neo4j_driver: Driver) -> Iterator[tuple[Run, list[Any]]]:
    """The reference: the same agent with the messages on its spans (SPAN_ONLY)."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        run = _run_agent(
            service,
            "t-logs-span-only",
            monkeypatch,
            mode="SPAN_ONLY",
            export="once",
            logs_first=False,
        )
    yield run, _shape(neo4j_driver, run)


@pytest.mark.parametrize("export", ["once", "per_trace"])
@pytest.mark.parametrize("order", ["logs_first", "spans_first"])
def test_event_only_mode_gives_the_graph_and_attributions_of_span_only_mode(
    export: str,
    order: str,
    span_only: tuple[Run, list[Any]],
    service: ServiceHandle,
    client: httpx.Client,
    project: str,
    neo4j_driver: Driver,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    reference, reference_shape = span_only
    run = _run_agent(
        service,
        project,
        monkeypatch,
        mode="EVENT_ONLY",
        export=export,
        logs_first=order == "logs_first",
    )
    shape = _shape(neo4j_driver, run)
    assert shape == reference_shape
    assert _attributions(client, run) == EXPECTED
    assert _attributions(client, reference) == EXPECTED
    # The embedding calls' inputs are no turns; every user message was read, once each.
    texts = neo4j_driver.execute_query(
        "MATCH (u:Unit {project: $p, kind: 'message'}) RETURN u.content AS text",
        p=project,
        database_="neo4j",
    ).records
    assert sorted(r["text"] for r in texts) == sorted([*FACTS, *ANSWERS])


# The older per-message events, by hand: one trace with an extraction and a write, one with a
# search and the answer the case is about.

SYSTEM = "Extract the facts."
SAID = "I moved to Porto."
FACT = "Lives in Porto."
QUESTION = "Where do I live?"
ANSWER = "In Lisbon."
CASE = {
    "memtrace.case.id": "where",
    "memtrace.case.question": QUESTION,
    "memtrace.case.expected_answer": "Porto",
    "memtrace.case.verdict": "failed",
}
CHAT = {"gen_ai.operation.name": "chat", "gen_ai.response.finish_reasons": ["stop"]}


def _spans(with_messages: bool) -> ExportTraceServiceRequest:
    """The two traces; the LLM calls' messages on the spans only ``with_messages``."""

    def chat(read: list[tuple[str, str]], wrote: str) -> dict[str, Any]:
        if not with_messages:
            return CHAT
        return {
            **CHAT,
            "gen_ai.input.messages": messages(*read),
            "gen_ai.output.messages": messages(("assistant", wrote)),
        }

    write = {
        "gen_ai.operation.name": "update_memory",
        "gen_ai.memory.store.id": "m",
        "gen_ai.memory.records": records(("home", FACT)),
    }
    search = {
        "gen_ai.operation.name": "search_memory",
        "gen_ai.memory.store.id": "m",
        "gen_ai.memory.query.text": QUESTION,
        "gen_ai.memory.records": records(("home", FACT)),
    }
    extract = chat([("system", SYSTEM), ("user", SAID)], FACT)
    answer = chat([("user", QUESTION)], ANSWER)
    return export(
        span(1, 1, "agent.remember", 0.0),
        span(1, 2, "chat extract", 0.1, parent=1, attributes=extract),
        span(1, 3, "update_memory", 0.2, parent=1, attributes=write),
        span(2, 1, "agent.answer", 1.0),
        span(2, 2, "search_memory", 1.1, parent=1, attributes=search),
        span(2, 3, "chat answer", 1.2, parent=1, attributes={**answer, **CASE}),
    )


def _message_logs() -> ExportLogsServiceRequest:
    """The LLM calls' messages as the older GenAI events, one log record each (out of order:
    the service orders a span's events by their time)."""

    def choice(text: str) -> dict[str, Any]:
        message = {"role": "assistant", "content": text}
        return {"index": 0, "finish_reason": "stop", "message": message}

    return log_export(
        log_record(2, 3, "gen_ai.choice", 1.25, body=choice(ANSWER)),
        log_record(1, 2, "gen_ai.user.message", 0.11, body={"content": SAID}),
        log_record(1, 2, "gen_ai.system.message", 0.1, body={"content": SYSTEM}),
        log_record(2, 3, "gen_ai.user.message", 1.2, body={"content": QUESTION}),
        log_record(1, 2, "gen_ai.choice", 0.15, body=choice(FACT)),
    )


def _send(
    client: httpx.Client, path: str, request: Any, project: str, **kwargs: Any
) -> httpx.Response:
    return client.post(
        path,
        params={"project": project},
        content=request.SerializeToString(),
        headers=PROTOBUF,
        **kwargs,
    )


def _snapshot(driver: Driver, project: str, leave_out: frozenset[str]) -> Any:
    return graph_snapshot(driver, project, frozenset({"project", *leave_out}))


@pytest.mark.parametrize("order", ["logs_first", "spans_first"])
def test_per_message_events_join_their_spans_in_either_order_and_re_sends_change_nothing(
    order: str, client: httpx.Client, project: str, neo4j_driver: Driver
) -> None:
    reference = project + "-span-only"
    assert _send(client, "/otlp/v1/traces", _spans(with_messages=True), reference).is_success
    spans, logs = _spans(with_messages=False), _message_logs()
    sends = [("/otlp/v1/logs", logs), ("/otlp/v1/traces", spans)]
    for path, request in sends if order == "logs_first" else reversed(sends):
        response = _send(client, path, request, project)
        assert response.status_code == 200, response.text
    # The graph of span-only mode: the spans' attributes differ (messages there, events here).
    assert _snapshot(neo4j_driver, project, frozenset({"attributes", "fp"})) == _snapshot(
        neo4j_driver, reference, frozenset({"attributes", "fp"})
    )
    stored = client.get("/cases/where", params={"project": project}).json()
    assert stored["answer_unit"] == f"otel:{2:032x}:{3:016x}/answer/0"
    attribution = client.post("/attribute/where", params={"project": project}).json()
    assert attribution["status"] == "attributed", attribution
    assert attribution["error_type"] == "ResponseError"

    whole = _snapshot(neo4j_driver, project, frozenset())
    for path, request in [*sends, *reversed(sends)]:  # retried exports, in any order
        response = _send(client, path, request, project)
        assert response.status_code == 200, response.text
    assert _snapshot(neo4j_driver, project, frozenset()) == whole


def test_the_two_orders_write_the_same_nodes_and_edges(
    client: httpx.Client, project: str, neo4j_driver: Driver
) -> None:
    spans, logs = _spans(with_messages=False), _message_logs()
    first, second = project + "-logs-first", project + "-spans-first"
    assert _send(client, "/otlp/v1/logs", logs, first).is_success
    assert _send(client, "/otlp/v1/traces", spans, first).is_success
    assert _send(client, "/otlp/v1/traces", spans, second).is_success
    joined = _send(client, "/otlp/v1/logs", logs, second)
    assert joined.status_code == 200, joined.text
    assert _snapshot(neo4j_driver, first, frozenset()) == _snapshot(
        neo4j_driver, second, frozenset()
    )


def test_the_answer_counts_what_it_kept_and_joined_and_what_it_rejected(
    client: httpx.Client, project: str
) -> None:
    assert _send(client, "/otlp/v1/traces", _spans(with_messages=False), project).is_success
    mixed = log_export(
        log_record(1, 2, "gen_ai.user.message", 0.11, body={"content": SAID}),
        log_record(1, 2, "app.started", 0.0, body="hello"),  # not a GenAI event
        log_record(0, 0, "gen_ai.user.message", 0.0, body={"content": "no span"}),
        log_record(9, 9, "gen_ai.user.message", 0.0, body={"content": "its span comes later"}),
    )
    response = client.post(
        "/otlp/v1/logs", params={"project": project}, json=as_otlp_logs_json(mixed)
    )
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["partialSuccess"]["rejectedLogRecords"] == "2"
    message = body["partialSuccess"]["errorMessage"]
    assert "logRecords[1]: not a GenAI message event" in message
    assert "logRecords[2]: names no span" in message
    assert "hello" not in message and "comes later" not in message  # no record text quoted
    counts = {k: body["memtrace"][k] for k in ("records", "events", "spans", "rejected")}
    assert counts == {"records": 4, "events": 2, "spans": 2, "rejected": 2}
    assert body["memtrace"]["operations_joined"] == 1
    warnings = client.get("/otlp/warnings", params={"project": project}).json()["warnings"]
    assert any("logRecords[1]: not a GenAI message event" in w["message"] for w in warnings)

    protobuf = _send(client, "/otlp/v1/logs", mixed, project)
    assert protobuf.headers["content-type"] == "application/x-protobuf"
    answer = ExportLogsServiceResponse.FromString(protobuf.content)
    assert answer.partial_success.rejected_log_records == 2
    clean = _send(client, "/otlp/v1/logs", log_export(), project)
    assert ExportLogsServiceResponse.FromString(clean.content).HasField("partial_success") is False


@pytest.mark.parametrize(
    ("content", "headers", "status", "said"),
    [
        (b"\x0a\xff\xff", PROTOBUF, 400, "not a protobuf ExportLogsServiceRequest"),
        (b"[1, 2]", {"content-type": "application/json"}, 400, "must be a JSON object"),
        (b"{not json", {"content-type": "application/json"}, 400, "body is not JSON"),
        (b"{}", {"content-type": "text/plain"}, 415, "Content-Type must be"),
        (b"{}", {"content-type": "application/json", "content-encoding": "br"}, 415, "gzip"),
        (b"\x1f\x8b broken", {**PROTOBUF, "content-encoding": "gzip"}, 400, "not valid gzip"),
    ],
)
def test_a_bad_body_is_a_clear_4xx(
    client: httpx.Client,
    project: str,
    content: bytes,
    headers: dict[str, str],
    status: int,
    said: str,
) -> None:
    response = client.post(
        "/otlp/v1/logs", params={"project": project}, content=content, headers=headers
    )
    assert response.status_code == status, response.text
    assert said in response.json()["message"]


def test_a_bad_id_or_field_says_where_it_is(client: httpx.Client, project: str) -> None:
    body = as_otlp_logs_json(log_export(log_record(1, 2, "gen_ai.user.message", 0.0)))
    record = body["resourceLogs"][0]["scopeLogs"][0]["logRecords"][0]
    response = client.post(
        "/otlp/v1/logs",
        params={"project": project},
        json={"resourceLogs": [{"scopeLogs": [{"logRecords": [{**record, "spanId": "xyz"}]}]}]},
    )
    assert response.status_code == 400, response.text
    assert response.json()["details"][0]["loc"] == [
        "resourceLogs",
        0,
        "scopeLogs",
        0,
        "logRecords",
        0,
        "spanId",
    ]
    wrong = {**record, "observedTimeUnixNano": "soon"}
    response = client.post(
        "/otlp/v1/logs",
        params={"project": project},
        json={"resourceLogs": [{"scopeLogs": [{"logRecords": [wrong]}]}]},
    )
    assert response.status_code == 400, response.text
    assert "logRecords[0]" in response.json()["message"]


def test_a_message_no_unit_can_hold_is_refused_before_it_is_kept(
    client: httpx.Client, project: str, neo4j_driver: Driver
) -> None:
    huge = log_record(3, 1, "gen_ai.user.message", 0.0, body={"content": "x" * 1_000_001})
    response = _send(client, "/otlp/v1/logs", log_export(huge), project)
    assert response.status_code == 422, response.text
    assert "content" in response.json()["message"]
    rows, _, _ = neo4j_driver.execute_query(
        "MATCH (l:OtlpSpanLogs {project: $p}) RETURN count(l) AS n", p=project
    )
    assert rows[0]["n"] == 0


def test_a_key_for_another_project_is_refused(keyed: ServiceHandle, neo4j_driver: Driver) -> None:
    logs = _message_logs().SerializeToString()
    # the spans this export names: the keyed projects are shared by the whole run, and the
    # isolation sweep keeps events of its own there
    spans = [f"{trace_id(t).hex()}:{span_id(s).hex()}" for t, s in ((1, 2), (2, 3))]

    def kept(project: str) -> int:
        rows, _, _ = neo4j_driver.execute_query(
            "MATCH (l:OtlpSpanLogs {project: $p}) WHERE l.id IN $ids RETURN count(l) AS n",
            p=project,
            ids=spans,
        )
        return int(rows[0]["n"])

    with httpx.Client(base_url=keyed.url, timeout=60) as http:
        as_b = {"Authorization": f"Bearer {B_KEY}", **PROTOBUF}
        by_query = http.post("/otlp/v1/logs", params={"project": A}, content=logs, headers=as_b)
        by_header = http.post(
            "/otlp/v1/logs", content=logs, headers={**as_b, "X-MemTrace-Project": A}
        )
        unkeyed = http.post("/otlp/v1/logs", content=logs, headers=PROTOBUF)
        assert by_query.status_code == 403, by_query.text
        assert by_header.status_code == 403, by_header.text
        assert unkeyed.status_code == 401, unkeyed.text
        assert kept(A) == 0
        as_a = {"Authorization": f"Bearer {A_KEY}", "X-MemTrace-Project": A, **PROTOBUF}
        own = http.post("/otlp/v1/logs", content=logs, headers=as_a)
        assert own.status_code == 200, own.text
    assert kept(A) == 2
    assert kept(B) == 0
