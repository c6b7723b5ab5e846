"""What a span says in the convention its instrumentation follows, read into one shape.

Three conventions describe LLM work in OpenTelemetry, each with its own attribute names; this
module turns any of them into a :class:`Reading`: the GenAI operation the span amounts to, the
messages it read and wrote, and for a search its query and documents. ``ingest.otlp`` then maps
a reading to units and a kind the same way whatever wrote it.

- **OpenInference** (Arize Phoenix's instrumentations), when ``openinference.span.kind`` is set:
  ``LLM`` is a chat call (``llm.input_messages.<i>.message.role/content``,
  ``llm.output_messages.<i>...``; ``input.value``/``output.value`` only when they are plain text
  and no messages are recorded), ``RETRIEVER`` a search (``input.value`` the query,
  ``retrieval.documents.<i>.document.id/content/score``), ``EMBEDDING`` an embedding call.
  ``TOOL``, ``CHAIN``, ``AGENT`` and the rest wrap other spans: their ``input.value`` /
  ``output.value`` repeat what the spans inside them read and wrote, so they make no units (a
  wrapper producing the answer again would take the blame its LLM call should get).
- **OpenTelemetry GenAI** (``opentelemetry-instrumentation-openai-v2`` and others), by
  ``gen_ai.operation.name``: the attribute forms ``gen_ai.system_instructions``,
  ``gen_ai.input.messages``, ``gen_ai.output.messages`` (``OTEL_SEMCONV_STABILITY_OPT_IN=
  gen_ai_latest_experimental``), and, when a span has none of them, the older forms recorded as
  span events: ``gen_ai.system.message``, ``gen_ai.user.message``, ``gen_ai.assistant.message``,
  ``gen_ai.tool.message`` (read), ``gen_ai.choice`` (written), and
  ``gen_ai.client.inference.operation.details`` (the attribute forms on an event), also when
  they came as log records (``POST /otlp/v1/logs``, ``ingest.otlp_logs``). The
  ``retrieval`` operation is a search too (``gen_ai.retrieval.query.text``,
  ``gen_ai.retrieval.documents``), as is ``search_memory`` (its records are read by
  ``ingest.otlp``).
- **OpenLLMetry** (Traceloop's ``opentelemetry-instrumentation-*``): the GenAI attributes above
  (0.62 and later), or the older ``gen_ai.prompt.<i>.role/content`` and
  ``gen_ai.completion.<i>...`` with ``llm.request.type`` (``chat``, ``completion``,
  ``embedding``) when ``gen_ai.operation.name`` is missing, and the ``gen_ai.content.prompt`` /
  ``gen_ai.content.completion`` events. ``traceloop.span.kind`` (workflow, task, agent, tool)
  spans wrap others; like OpenInference's chains their ``traceloop.entity.input``/``output`` make
  no units.

An embedding call's input is text to be embedded (a question being searched for, a memory being
stored), never a turn of the conversation: it makes no units in any convention, so it can never
be taken for the evidence of a case.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from ingest import otlp_units as u
from ingest.otlp_spans import SpanView

LLM_OPERATIONS = frozenset({"chat", "text_completion", "generate_content"})
SEARCH_OPERATIONS = frozenset({"search_memory", "retrieval"})
EMBEDDING_OPERATION = "embeddings"

OPENINFERENCE_KIND = "openinference.span.kind"
_OPENINFERENCE_OPERATIONS = {"LLM": "chat", "RETRIEVER": "retrieval", "EMBEDDING": "embeddings"}
_OPENLLMETRY_REQUEST_TYPES = {
    "chat": "chat",
    "completion": "text_completion",
    "embedding": "embeddings",
}
_INPUT_EVENTS = {
    "gen_ai.system.message": "system",
    "gen_ai.user.message": "user",
    "gen_ai.assistant.message": "assistant",
    "gen_ai.tool.message": "tool",
}
_DETAILS_EVENT = "gen_ai.client.inference.operation.details"
_CONTENT_EVENTS = ("gen_ai.content.prompt", "gen_ai.content.completion")
MESSAGE_EVENTS = frozenset({*_INPUT_EVENTS, "gen_ai.choice", _DETAILS_EVENT, *_CONTENT_EVENTS})
"""The events that carry an LLM call's messages, on the span or as log records joined to it
(``ingest.otlp_logs``)."""
_TEXT_MIME = "text/plain"


@dataclass(frozen=True)
class Reading:
    """A span as MemTrace reads it. ``operation`` is a GenAI operation name (``chat``,
    ``embeddings``, ``retrieval``, ``search_memory``, ``update_memory``, ...) or None;
    ``documents`` is None when the span names none in its own convention (``ingest.otlp`` then
    reads ``gen_ai.memory.records``)."""

    operation: str | None
    inputs: list[u.Message] = field(default_factory=list)
    outputs: list[u.Message] = field(default_factory=list)
    query: str | None = None
    documents: list[u.Record] | None = None

    @property
    def is_llm(self) -> bool:
        return self.operation in LLM_OPERATIONS

    @property
    def is_search(self) -> bool:
        return self.operation in SEARCH_OPERATIONS


def read_span(span: SpanView) -> Reading:
    """The span in whichever convention it follows (OpenInference's kind attribute wins)."""
    if span.attributes.get(OPENINFERENCE_KIND) is not None:
        return _openinference(span.attributes)
    return _genai(span)


# OpenInference.


def _openinference(attrs: dict[str, Any]) -> Reading:
    kind = str(attrs.get(OPENINFERENCE_KIND)).upper()
    operation = _OPENINFERENCE_OPERATIONS.get(kind)
    if operation == "chat":
        inputs = _indexed(attrs, "llm.input_messages", "message", "user")
        outputs = _indexed(attrs, "llm.output_messages", "message", "assistant")
        return Reading(
            operation,
            inputs or _plain_value(attrs, "input", "user"),
            outputs or _plain_value(attrs, "output", "assistant"),
        )
    if operation == "retrieval":
        query = attrs.get("input.value")
        return Reading(
            operation,
            query=None if query is None else u.text_of(query),
            documents=_openinference_documents(attrs),
        )
    return Reading(operation)


_MESSAGE_FIELD = re.compile(r"^(\d+)\.(\w+)\.(.+)$")


def _indexed(attrs: dict[str, Any], prefix: str, item: str, role: str) -> list[u.Message]:
    """``<prefix>.<i>.<item>.role`` / ``.content`` (or ``.contents.<j>.message_content.text``,
    OpenInference's multi-part form) as messages, in index order."""
    by_index: dict[int, dict[str, Any]] = {}
    for name, value in attrs.items():
        if not name.startswith(prefix + "."):
            continue
        m = _MESSAGE_FIELD.match(name[len(prefix) + 1 :])
        if m is None or m[2] != item:
            continue
        by_index.setdefault(int(m[1]), {})[m[3]] = value
    found = []
    for _, fields in sorted(by_index.items()):
        text = fields.get("content")
        if text is None:
            parts = sorted(
                (int(p[1]), v)
                for k, v in fields.items()
                if (p := re.match(r"^contents\.(\d+)\.message_content\.text$", k))
            )
            text = "\n".join(u.text_of(v) for _, v in parts) if parts else None
        if text is not None:
            found.append(u.Message(str(fields.get("role") or role), u.text_of(text)))
    return found


def _plain_value(attrs: dict[str, Any], side: str, role: str) -> list[u.Message]:
    """``input.value`` / ``output.value`` when plain text; JSON there is the raw API payload."""
    value = attrs.get(f"{side}.value")
    if value is None or attrs.get(f"{side}.mime_type", _TEXT_MIME) != _TEXT_MIME:
        return []
    return [u.Message(role, u.text_of(value))]


def _openinference_documents(attrs: dict[str, Any]) -> list[u.Record]:
    by_index: dict[int, dict[str, Any]] = {}
    for name, value in attrs.items():
        m = re.match(r"^retrieval\.documents\.(\d+)\.document\.(id|content|score)$", name)
        if m:
            by_index.setdefault(int(m[1]), {})[m[2]] = value
    return [
        u.Record(
            None if fields.get("id") is None else str(fields["id"]),
            None if fields.get("content") is None else u.text_of(fields["content"]),
            fields.get("score"),
        )
        for _, fields in sorted(by_index.items())
    ]


# OpenTelemetry GenAI and OpenLLMetry.


def _genai(span: SpanView) -> Reading:
    attrs = span.attributes
    operation = _text(attrs.get("gen_ai.operation.name")) or _OPENLLMETRY_REQUEST_TYPES.get(
        str(attrs.get("llm.request.type"))
    )
    if operation == EMBEDDING_OPERATION:
        return Reading(operation)
    if operation == "retrieval":
        query = attrs.get("gen_ai.retrieval.query.text")
        documents = attrs.get("gen_ai.retrieval.documents")
        return Reading(
            operation,
            query=None if query is None else u.text_of(query),
            documents=None if documents is None else (u.records(documents) or []),
        )
    if operation == "search_memory":
        query = attrs.get("gen_ai.memory.query.text")
        return Reading(operation, query=None if query is None else u.text_of(query))
    inputs, outputs = u.input_messages(attrs), u.output_messages(attrs)
    if not inputs and not outputs:
        inputs, outputs = _event_messages(span.events)
    return Reading(operation, inputs, outputs)


def _event_messages(events: list[dict[str, Any]]) -> tuple[list[u.Message], list[u.Message]]:
    """The older GenAI forms: one span event per message, or the operation-details event."""
    inputs: list[u.Message] = []
    outputs: list[u.Message] = []
    for event in events:
        name, attrs = event.get("name"), event.get("attributes") or {}
        if name == _DETAILS_EVENT or name in _CONTENT_EVENTS:
            inputs += u.input_messages(attrs)
            outputs += u.output_messages(attrs)
        elif name in _INPUT_EVENTS:
            text = _event_content(attrs.get("content", attrs.get("message")))
            if text is not None:
                inputs.append(u.Message(str(attrs.get("role") or _INPUT_EVENTS[name]), text))
        elif name == "gen_ai.choice":
            text = _event_content(attrs.get("message", attrs.get("content")))
            if text is not None:
                outputs.append(u.Message("assistant", text))
    return inputs, outputs


def _event_content(value: Any) -> str | None:
    """An event's ``content`` (text), or its ``message`` (``{role?, content}``, maybe JSON)."""
    if value is None:
        return None
    if isinstance(value, str):
        try:
            decoded = json.loads(value)
        except json.JSONDecodeError:
            return value
        value = decoded if isinstance(decoded, dict) else value
    if isinstance(value, dict):
        content = value.get("content")
        return None if content is None else u.text_of(content)
    return u.text_of(value)


def _text(value: Any) -> str | None:
    return None if value is None or value == "" else u.text_of(value)
