"""The three OpenTelemetry instrumentations people run, as released, sending to ``/otlp``.

For each of OpenInference's ``openinference-instrumentation-openai``, the official
``opentelemetry-instrumentation-openai-v2`` (GenAI conventions) and OpenLLMetry's
``opentelemetry-instrumentation-openai``: a memory agent (``tests.support.otel_agent``) runs a
real ``openai`` client against the scripted OpenAI-compatible server, the instrumentation traces
its LLM and embedding calls, the agent traces its memory store with GenAI memory spans, and the
real SDK exporter sends it all to the service. Five questions fail (extraction, update,
deletion, retrieval, response), and each must be attributed to the operation that broke it,
found from the spans alone, whether the agent exports once or once per trace.

The three patch the same ``openai`` classes, so each test instruments for itself and
uninstruments after (they install side by side; only one is active at a time).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import httpx
import openai
import pytest
from neo4j import Driver
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.instrumentation.instrumentor import (  # type: ignore[attr-defined]
    BaseInstrumentor,
)
from opentelemetry.processor.baggage import BaggageSpanProcessor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

from tests.support.llm_server import scripted_llm
from tests.support.otel_agent import MemoryAgent, Search, script
from tests.support.servers import ServiceHandle

FACTS = {
    "My dog is called Rex and he loves the beach.": "User has a dog who loves the beach.",
    "I live in Lisbon.": "User lives in Lisbon.",
    "My sister moved to Denver last year.": "User's sibling resides in Denver.",
    "My sister loves live music.": "User's sister loves live music.",
    "My favourite colour is green.": "User's favourite colour is green.",
    "I work at Acme.": "User works at Acme.",
    "I started playing chess.": "User plays chess.",
}
UNSURE = {"q-sister"}
"""Cases whose result is ``inconclusive`` though it names the right operation: "User's sibling
resides in Denver" states the answer in none of the question's words, a carry score on the
heuristic judge's line, and the stricter second reading (``attribution.second_reading``) blames
the extraction instead."""
ANSWERS = {
    "What is my dog called?": "I do not know your dog's name.",
    "Which city do I live in?": "I do not know where you live.",
    "Where does my sister live?": "I do not know where your sister lives.",
    "What is my favourite colour?": "Your favourite colour is blue.",
    "Where do I work?": "I do not know where you work.",
}


@dataclass(frozen=True)
class Instrumentation:
    make: Callable[[], BaseInstrumentor]
    search: Search
    env: dict[str, str]


def _openinference() -> BaseInstrumentor:
    from openinference.instrumentation.openai import OpenAIInstrumentor

    return OpenAIInstrumentor()


def _genai() -> BaseInstrumentor:
    from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor

    return OpenAIInstrumentor()


def _openllmetry() -> BaseInstrumentor:
    from opentelemetry.instrumentation.openai import OpenAIInstrumentor

    return OpenAIInstrumentor()


INSTRUMENTATIONS = {
    "openinference": Instrumentation(_openinference, "openinference", {}),
    # The official one records message content only when asked to, in the latest conventions.
    "otel-genai": Instrumentation(
        _genai,
        "genai",
        {
            "OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental",
            "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "SPAN_ONLY",
        },
    ),
    "openllmetry": Instrumentation(_openllmetry, "genai", {"TRACELOOP_TRACE_CONTENT": "true"}),
}


@pytest.fixture(params=sorted(INSTRUMENTATIONS))
def traced(
    request: pytest.FixtureRequest,
    service: ServiceHandle,
    project: str,
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[tuple[TracerProvider, Instrumentation]]:
    chosen = INSTRUMENTATIONS[request.param]
    for key, value in chosen.env.items():
        monkeypatch.setenv(key, value)
    provider = TracerProvider(resource=Resource.create({"service.name": "memory-agent"}))
    provider.add_span_processor(BaggageSpanProcessor(lambda key: key.startswith("memtrace.")))
    exporter = OTLPSpanExporter(
        endpoint=f"{service.url}/otlp/v1/traces",
        headers={"X-MemTrace-Project": project},
        timeout=120,
    )
    provider.add_span_processor(BatchSpanProcessor(exporter, schedule_delay_millis=60_000))
    instrumentor = chosen.make()
    instrumentor.instrument(tracer_provider=provider)
    try:
        yield provider, chosen
    finally:
        instrumentor.uninstrument()
        provider.shutdown()


@pytest.mark.parametrize("export", ["once", "per_trace"])
def test_each_failure_type_is_blamed_on_its_operation(
    export: str,
    traced: tuple[TracerProvider, Instrumentation],
    client: httpx.Client,
    project: str,
    neo4j_driver: Driver,
) -> None:
    provider, chosen = traced
    with scripted_llm(script(FACTS, ANSWERS)) as llm:
        agent = MemoryAgent(
            openai.OpenAI(base_url=llm.base_url, api_key="scripted", max_retries=0),
            provider.get_tracer("memory-agent"),
            search_style=chosen.search,
            # A long-running agent's exporter sends each turn's trace on its own.
            after_turn=provider.force_flush if export == "per_trace" else None,
        )
        agent.remember("dog", "pet", "My dog is called Rex and he loves the beach.")
        agent.remember("city", "home", "I live in Lisbon.")
        agent.remember("sister", "sibling", "My sister moved to Denver last year.")
        agent.remember("music", "sister-music", "My sister loves live music.")
        agent.remember("colour", "colour", "My favourite colour is green.")
        agent.remember("job", "job", "I work at Acme.")
        agent.remember("chess", "job", "I started playing chess.")  # the wrong record rewritten
        agent.forget("forget", "home")
        agent.ask("q-dog", "What is my dog called?", "Rex")
        agent.ask("q-city", "Which city do I live in?", "Lisbon")
        agent.ask("q-job", "Where do I work?", "Acme")
        agent.ask("q-sister", "Where does my sister live?", "Denver")
        agent.ask("q-colour", "What is my favourite colour?", "green")
    assert provider.force_flush(120_000)

    expected = {
        "q-dog": ("ExtractionError", "extraction", "dog"),
        "q-city": ("DeletionError", "deletion", "forget"),
        "q-job": ("UpdateError", "update", "chess"),
        "q-sister": ("RetrievalError", "retrieval", "q-sister"),
        "q-colour": ("ResponseError", "response", "q-colour"),
    }
    found = {}
    for case_id in expected:
        result = client.post(f"/attribute/{case_id}", params={"project": project}).json()
        status = "inconclusive" if case_id in UNSURE else "attributed"
        assert result.get("status") == status, (case_id, result)
        blamed = result["operation"]
        trace_hex = blamed["id"].split(":")[1]
        turn = next(label for label, t in agent.traces.items() if f"{t:032x}" == trace_hex)
        found[case_id] = (result["error_type"], blamed["kind"], turn)
    assert found == expected

    # The embedding calls' inputs (questions, memory texts) are not turns of a conversation.
    messages = neo4j_driver.execute_query(
        "MATCH (u:Unit {project: $p, kind: 'message'}) RETURN u.content AS text", p=project
    ).records
    assert sorted(r["text"] for r in messages) == sorted([*FACTS, *ANSWERS])
