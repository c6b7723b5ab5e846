"""Each convention's attributes, as its instrumentations write them, read into units and kinds
(``ingest.otlp_conventions`` through ``ingest.otlp.convert_export``; no service needed). The
attribute names are those the released packages write (tests/otlp/test_otlp_instrumentations.py runs
the packages themselves)."""

from __future__ import annotations

import json
from typing import Any

from opentelemetry.proto.trace.v1.trace_pb2 import Span

from ingest.otlp import convert_export
from tests.support.otlp_export import T0, export, kv, messages, span

WRITE = {
    "gen_ai.operation.name": "update_memory",
    "gen_ai.memory.store.id": "s",
    "gen_ai.memory.records": json.dumps([{"id": "r1", "content": "User lives in Lisbon."}]),
}


def convert(*spans: Span) -> dict[str, Any]:
    batch = convert_export(export(*spans), "p").batch
    units = {u["id"]: u for u in batch["units"]}
    ops = {op["name"]: op for op in batch["operations"]}
    return {
        name: {
            "kind": op["kind"],
            "in": [(units[i]["kind"], units[i]["content"]) for i in op["inputs"]],
            "out": [(units[i]["kind"], units[i]["content"]) for i in op["outputs"]],
        }
        for name, op in ops.items()
    }


def with_events(s: Span, *events: tuple[str, dict[str, Any]]) -> Span:
    for name, attributes in events:
        s.events.add(
            name=name, time_unix_nano=T0, attributes=[kv(k, v) for k, v in attributes.items()]
        )
    return s


def test_openinference_llm_call_before_a_write_is_an_extraction() -> None:
    llm = {
        "openinference.span.kind": "LLM",
        "input.value": json.dumps({"messages": "the raw request"}),
        "input.mime_type": "application/json",
        "llm.input_messages.0.message.role": "system",
        "llm.input_messages.0.message.content": "Extract facts.",
        "llm.input_messages.1.message.role": "user",
        "llm.input_messages.1.message.contents.0.message_content.type": "text",
        "llm.input_messages.1.message.contents.0.message_content.text": "I live in Lisbon.",
        "llm.output_messages.0.message.role": "assistant",
        "llm.output_messages.0.message.content": "User lives in Lisbon.",
    }
    ops = convert(
        span(1, 1, "turn", 0),
        span(1, 2, "ChatCompletion", 1, parent=1, attributes=llm),
        span(1, 3, "update_memory", 2, parent=1, attributes=WRITE),
    )
    assert ops["ChatCompletion"] == {
        "kind": "extraction",
        "in": [("prompt", "Extract facts."), ("message", "I live in Lisbon.")],
        "out": [("answer", "User lives in Lisbon.")],
    }
    assert ops["update_memory"]["in"] == [("answer", "User lives in Lisbon.")]


def test_openinference_retriever_is_a_search_of_its_documents() -> None:
    retriever = {
        "openinference.span.kind": "RETRIEVER",
        "input.value": "Where do I live?",
        "retrieval.documents.0.document.id": "r1",
        "retrieval.documents.0.document.content": "User lives in Lisbon.",
        "retrieval.documents.0.document.score": 0.9,
        "retrieval.documents.1.document.content": "User likes tea.",
    }
    ops = convert(span(2, 1, "retrieve", 0, attributes=retriever))
    assert ops["retrieve"] == {
        "kind": "retrieval",
        "in": [("query", "Where do I live?"), ("memory", "User lives in Lisbon.")],
        "out": [("context", "User lives in Lisbon."), ("context", "User likes tea.")],
    }


def test_embedding_inputs_are_no_conversation_messages() -> None:
    """OpenInference's EMBEDDING span and OpenLLMetry's ``embeddings`` span (which writes the
    texts as ``gen_ai.input.messages``) make no units."""
    openinference = {
        "openinference.span.kind": "EMBEDDING",
        "embedding.embeddings.0.embedding.text": "Where do I live?",
    }
    openllmetry = {
        "gen_ai.operation.name": "embeddings",
        "gen_ai.input.messages": messages(("user", "Where do I live?")),
    }
    ops = convert(
        span(3, 1, "CreateEmbeddings", 0, attributes=openinference),
        span(3, 2, "openai.embeddings", 1, attributes=openllmetry),
    )
    assert ops == {
        "CreateEmbeddings": {"kind": "embedding", "in": [], "out": []},
        "openai.embeddings": {"kind": "embedding", "in": [], "out": []},
    }


def test_openinference_chain_and_tool_make_no_units() -> None:
    """A chain's input and output repeat its LLM call's: as units they would make the chain
    produce the answer a second time."""
    chain = {
        "openinference.span.kind": "CHAIN",
        "input.value": "Where do I live?",
        "input.mime_type": "text/plain",
        "output.value": "In Lisbon.",
    }
    tool = {**chain, "openinference.span.kind": "TOOL"}
    ops = convert(
        span(4, 1, "agent", 0, attributes=chain), span(4, 2, "lookup", 1, attributes=tool)
    )
    assert ops == {
        "agent": {"kind": "other", "in": [], "out": []},
        "lookup": {"kind": "other", "in": [], "out": []},
    }


def test_openllmetry_indexed_prompt_and_completion_with_its_request_type() -> None:
    legacy = {
        "llm.request.type": "chat",
        "traceloop.span.kind": "task",
        "gen_ai.prompt.0.role": "user",
        "gen_ai.prompt.0.content": "I live in Lisbon.",
        "gen_ai.completion.0.role": "assistant",
        "gen_ai.completion.0.content": "User lives in Lisbon.",
    }
    ops = convert(
        span(5, 1, "turn", 0),
        span(5, 2, "openai.chat", 1, parent=1, attributes=legacy),
        span(5, 3, "update_memory", 2, parent=1, attributes=WRITE),
    )
    assert ops["openai.chat"] == {
        "kind": "extraction",
        "in": [("message", "I live in Lisbon.")],
        "out": [("answer", "User lives in Lisbon.")],
    }


def test_genai_event_forms_are_read_when_no_attribute_form_is_sent() -> None:
    """The GenAI conventions before ``gen_ai.input.messages``: one event per message."""
    old = with_events(
        span(6, 2, "chat old", 1, parent=1, attributes={"gen_ai.operation.name": "chat"}),
        ("gen_ai.system.message", {"content": "Extract facts."}),
        ("gen_ai.user.message", {"content": "I live in Lisbon."}),
        ("gen_ai.choice", {"index": 0, "message": json.dumps({"content": "User: Lisbon."})}),
    )
    details = with_events(
        span(7, 2, "chat details", 1, parent=1, attributes={"gen_ai.operation.name": "chat"}),
        (
            "gen_ai.client.inference.operation.details",
            {
                "gen_ai.input.messages": messages(("user", "I moved to Porto.")),
                "gen_ai.output.messages": messages(("assistant", "User lives in Porto.")),
            },
        ),
    )
    ops = convert(old, details)
    assert ops["chat old"]["in"] == [("prompt", "Extract facts."), ("message", "I live in Lisbon.")]
    assert ops["chat old"]["out"] == [("answer", "User: Lisbon.")]
    assert ops["chat details"]["in"] == [("message", "I moved to Porto.")]
    assert ops["chat details"]["out"] == [("answer", "User lives in Porto.")]


def test_genai_retrieval_operation_is_a_search() -> None:
    retrieval = {
        "gen_ai.operation.name": "retrieval",
        "gen_ai.data_source.id": "kb",
        "gen_ai.retrieval.query.text": "Where do I live?",
        "gen_ai.retrieval.documents": json.dumps(
            [{"id": "d1", "content": "User lives in Lisbon.", "score": 0.8}]
        ),
    }
    ops = convert(span(8, 1, "retrieval kb", 0, attributes=retrieval))
    assert ops["retrieval kb"] == {
        "kind": "retrieval",
        "in": [("query", "Where do I live?"), ("memory", "User lives in Lisbon.")],
        "out": [("context", "User lives in Lisbon.")],
    }
