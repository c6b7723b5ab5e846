"""Cases recorded after the fact by trace id (``POST /otlp/cases``): an agent's turns exported
by the real OpenTelemetry SDK with no ``memtrace.case.*`` attribute at all, then the verdicts
posted later naming each turn's trace, as feedback reaches a trace in Langfuse or Phoenix."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from memtrace_client import MemTraceClient, RejectedRequest
from neo4j import Driver
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.trace import Tracer

from tests.support.cli import memtrace
from tests.support.graph import graph_counts
from tests.support.keyed import ADMIN_KEY, B_KEY, A, B
from tests.support.otlp_export import messages, records
from tests.support.servers import ServiceHandle

STORE = "bob-memories"
CONVERSATION = "bob-chat-7"


def _provider(service: ServiceHandle, project: str, key: str | None = None) -> TracerProvider:
    headers = {"X-MemTrace-Project": project}
    if key is not None:
        headers["Authorization"] = f"Bearer {key}"
    exporter = OTLPSpanExporter(
        endpoint=f"{service.url}/otlp/v1/traces", headers=headers, timeout=120
    )
    provider = TracerProvider(resource=Resource.create({"service.name": "bob-agent"}))
    provider.add_span_processor(BatchSpanProcessor(exporter, schedule_delay_millis=60_000))
    return provider


def _span(tracer: Tracer, name: str, **attributes: str) -> None:
    with tracer.start_as_current_span(name) as span:
        span.set_attribute("session.id", CONVERSATION)
        for key, value in attributes.items():
            span.set_attribute(key, value)


def _remember(tracer: Tracer) -> None:
    """The turn where Bob tells the agent about himself: an extraction, then the memory write."""
    with tracer.start_as_current_span("agent.turn remember"):
        _span(
            tracer,
            "chat extract",
            **{
                "gen_ai.operation.name": "chat",
                "memtrace.operation.name": "extract facts",
                "gen_ai.input.messages": messages(("user", "Bob: I work at a library, love chess")),
                "gen_ai.output.messages": messages(
                    ("assistant", '{"facts": ["Works at a library", "Loves chess"]}')
                ),
            },
        )
        _span(
            tracer,
            "update_memory bob",
            **{
                "gen_ai.operation.name": "update_memory",
                "gen_ai.memory.store.id": STORE,
                "gen_ai.memory.records": records(
                    ("work", "Bob works at a library"), ("hobby", "Bob loves chess")
                ),
            },
        )


def _ask(tracer: Tracer, name: str, question: str, found: str, answer: str) -> int:
    """A question turn (a query rewrite, a search, the answering call); its trace id, as the
    agent would log it. The rewrite answered too, but earlier: the case is about the last call.
    The answering call read an earlier user turn too: the question is the last one."""
    with tracer.start_as_current_span(f"agent.ask {name}") as turn:
        _span(
            tracer,
            f"chat rewrite {name}",
            **{
                "gen_ai.operation.name": "chat",
                "memtrace.operation.name": f"rewrite {name}",
                "gen_ai.input.messages": messages(("user", f"As a search query: {question}")),
                "gen_ai.output.messages": messages(("assistant", question.lower())),
            },
        )
        _span(
            tracer,
            f"search_memory {name}",
            **{
                "gen_ai.operation.name": "search_memory",
                "gen_ai.memory.store.id": STORE,
                "gen_ai.memory.query.text": question,
                "gen_ai.memory.records": found,
            },
        )
        _span(
            tracer,
            f"chat answer {name}",
            **{
                "gen_ai.operation.name": "chat",
                "memtrace.operation.name": f"answer {name}",
                "gen_ai.input.messages": messages(
                    ("system", "Answer from what you remember of Bob."),
                    ("user", "Hello again."),
                    ("assistant", "Hello Bob."),
                    ("user", question),
                ),
                "gen_ai.output.messages": messages(("assistant", answer)),
            },
        )
        trace_id: int = turn.get_span_context().trace_id
    return trace_id


WORK_Q = "Where does Bob work?"
HOBBY_Q = "What does Bob love playing?"


def agent_run(tracer: Tracer) -> dict[str, int]:
    """Bob's agent: one turn to remember, two questions answered wrong (a search that missed
    the record, an answer that ignored the record found). No span names a case."""
    _remember(tracer)
    return {
        "work": _ask(
            tracer, "work", WORK_Q, records(("hobby", "Bob loves chess")), "I do not know."
        ),
        "hobby": _ask(tracer, "hobby", HOBBY_Q, records(("hobby", "Bob loves chess")), "Tennis."),
    }


@pytest.fixture
def exported(service: ServiceHandle, project: str) -> Iterator[dict[str, int]]:
    provider = _provider(service, project)
    traces = agent_run(provider.get_tracer("bob"))
    assert provider.force_flush(120_000)
    yield traces
    provider.shutdown()


def _post(client: httpx.Client, project: str, **body: str) -> httpx.Response:
    return client.post("/otlp/cases", params={"project": project}, json=body)


def test_cases_posted_later_by_trace_id_are_attributed(
    service: ServiceHandle,
    client: httpx.Client,
    neo4j_driver: Driver,
    project: str,
    exported: dict[str, int],
) -> None:
    stored = client.get("/cases", params={"project": project}).json()
    assert stored == []  # the export named no case
    sdk = MemTraceClient(service.url, project=project)
    work = sdk.case_from_trace("work", exported["work"], "failed", "a library")
    hobby = _post(
        client,
        project,
        case_id="hobby",
        trace_id=f"{exported['hobby']:032X}",  # upper case is the same trace
        verdict="failed",
        expected_answer="chess",
    )
    assert hobby.status_code == 200, hobby.text
    for answer, question, trace in ((work, WORK_Q, "work"), (hobby.json(), HOBBY_Q, "hobby")):
        assert answer["created"] is True
        assert answer["trace_id"] == f"{exported[trace]:032x}"
        assert answer["question_from"] == "spans"
        assert answer["case"]["question"] == question  # the last user message the call read
        assert answer["conversation"] == CONVERSATION
        assert answer["case"]["verdict"] == "failed"
        assert answer["case"]["answer_unit"] == (
            f"otel:{answer['trace_id']}:{answer['span_id']}/answer/0"
        )

    found = {}
    for case_id in ("work", "hobby"):
        result = client.post(f"/attribute/{case_id}", params={"project": project}).json()
        found[case_id] = (result["status"], result.get("error_type"), result["operation"]["name"])
    assert found == {
        "work": ("attributed", "RetrievalError", "search_memory work"),
        "hobby": ("attributed", "ResponseError", "answer hobby"),
    }

    before = graph_counts(neo4j_driver, project)
    again = sdk.case_from_trace("work", exported["work"], "failed", "a library")
    assert again["created"] is False
    assert again["case"] == work["case"]
    assert graph_counts(neo4j_driver, project) == before
    listed = client.get("/cases", params={"project": project}).json()
    assert sorted(c["id"] for c in listed) == ["hobby", "work"]

    with pytest.raises(RejectedRequest) as redefined:  # the same id, another expected answer
        sdk.case_from_trace("work", exported["work"], "failed", "a museum")
    assert redefined.value.status == 409
    assert graph_counts(neo4j_driver, project) == before


def test_the_cli_records_a_case_with_its_own_question(
    service: ServiceHandle, client: httpx.Client, project: str, exported: dict[str, int]
) -> None:
    trace_id = f"{exported['work']:032x}"
    where = ("--project", project, "--url", service.url)
    done = memtrace(
        "case-from-trace", "asked", trace_id, "--expected", "a library",
        "--question", "Bob's workplace?", *where,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "case asked recorded" in done.stdout
    case = client.get("/cases/asked", params={"project": project}).json()
    assert (case["question"], case["verdict"]) == ("Bob's workplace?", "failed")
    assert case["attributes"]["trace_id"] == trace_id

    unknown = "0123456789abcdef0123456789abcdef"
    refused = memtrace("case-from-trace", "other", unknown, "--expected", "x", *where)
    assert refused.returncode == 1
    assert "HTTP 404" in refused.stderr and unknown in refused.stderr


def test_an_unknown_trace_is_404_naming_it(
    client: httpx.Client, neo4j_driver: Driver, project: str, exported: dict[str, int]
) -> None:
    before = graph_counts(neo4j_driver, project)
    unknown = "0123456789abcdef0123456789abcdef"
    answer = _post(
        client, project, case_id="c", trace_id=unknown, verdict="failed", expected_answer="x"
    )
    assert answer.status_code == 404, answer.text
    assert answer.json()["error"] == "not_found"
    assert unknown in answer.json()["message"]
    assert answer.json()["details"][0]["loc"] == ["body", "trace_id"]
    # A trace stored in another project is unknown in this one.
    elsewhere = _post(
        client,
        project + "-other",
        case_id="c",
        trace_id=f"{exported['work']:032x}",
        verdict="failed",
        expected_answer="x",
    )
    assert elsewhere.status_code == 404, elsewhere.text
    assert graph_counts(neo4j_driver, project) == before


def test_a_trace_with_no_answering_call_is_422_naming_it(
    service: ServiceHandle, client: httpx.Client, neo4j_driver: Driver, project: str
) -> None:
    provider = _provider(service, project)
    tracer = provider.get_tracer("bob")
    with tracer.start_as_current_span("agent.turn remember") as turn:
        _remember(tracer)  # an extraction and a write: memory, not an answer
        trace_id = f"{turn.get_span_context().trace_id:032x}"
    assert provider.force_flush(120_000)
    provider.shutdown()
    before = graph_counts(neo4j_driver, project)
    answer = _post(
        client, project, case_id="c", trace_id=trace_id, verdict="failed", expected_answer="x"
    )
    assert answer.status_code == 422, answer.text
    assert trace_id in answer.json()["message"]
    assert "no answering LLM call" in answer.json()["message"]
    assert graph_counts(neo4j_driver, project) == before


def test_a_project_key_cannot_reach_another_projects_trace(
    keyed: ServiceHandle, neo4j_driver: Driver
) -> None:
    provider = _provider(keyed, A, ADMIN_KEY)
    trace_id = f"{_ask(provider.get_tracer('bob'), 'work', WORK_Q, records(), 'No idea.'):032x}"
    assert provider.force_flush(120_000)
    provider.shutdown()
    body = {"case_id": "k", "trace_id": trace_id, "verdict": "failed", "expected_answer": "x"}
    before = {p: graph_counts(neo4j_driver, p) for p in (A, B)}
    with httpx.Client(base_url=keyed.url, timeout=60) as http:
        as_b = {"Authorization": f"Bearer {B_KEY}"}
        in_b = http.post("/otlp/cases", params={"project": B}, json=body, headers=as_b)
        into_a = http.post("/otlp/cases", params={"project": A}, json=body, headers=as_b)
        body_a = http.post("/otlp/cases", json={**body, "project": A}, headers=as_b)
    assert in_b.status_code == 404, in_b.text  # B's key sees only B, where the trace is not
    assert into_a.status_code == 403, into_a.text
    assert body_a.status_code == 403, body_a.text
    assert {p: graph_counts(neo4j_driver, p) for p in (A, B)} == before
