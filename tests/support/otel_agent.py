"""A small memory agent traced the way a user of an OpenTelemetry instrumentation traces one.

The instrumentation (OpenInference, OpenTelemetry GenAI or OpenLLMetry) records the ``openai``
client's calls; it cannot see the memory store, so the agent records its store operations itself
with the OTel API: GenAI memory spans (``update_memory``, ``delete_memory``, ``search_memory``),
or, for an OpenInference user, the search as a ``RETRIEVER`` span. Each turn is its own trace,
as in a long-running agent. A question under test is marked with ``memtrace.case.*`` baggage,
which ``opentelemetry-processor-baggage``'s ``BaggageSpanProcessor`` copies onto the spans
started while it is set: the answering LLM call, the only span started in that block.

The script: the extraction prompt turns each user message into one fact (``FACTS``), the answer
prompt answers each question (``ANSWERS``); embeddings are the scripted server's bag of words, so
a search ranks memories by the words they share with the question.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal

import openai
from opentelemetry import baggage, context, trace

from tests.support.llm_server import user_text

EXTRACT = "Extract the one fact worth remembering from the user's message."
ANSWER = "Answer the user's question from these memories only:"
STORE = "agent-memory"

Search = Literal["genai", "openinference"]


def script(facts: dict[str, str], answers: dict[str, str]) -> Any:
    """The scripted server's ``answer``: a fact for an extraction, an answer for a question."""

    def answer(request: dict[str, Any]) -> str:
        system = next((str(m["content"]) for m in request["messages"] if m["role"] == "system"), "")
        said = user_text(request)
        return facts[said] if system == EXTRACT else answers[said]

    return answer


@dataclass
class MemoryAgent:
    client: openai.OpenAI
    tracer: trace.Tracer
    search_style: Search = "genai"
    top_k: int = 1
    memories: dict[str, tuple[str, list[float]]] = field(default_factory=dict)
    after_turn: Callable[[], object] | None = None
    """Called as each turn's trace ends: ``provider.force_flush`` exports one trace at a time."""
    traces: dict[str, int] = field(default_factory=dict)
    """The trace id of each turn, by the label the test gave it."""

    @contextmanager
    def _turn(self, name: str, label: str) -> Iterator[None]:
        with self.tracer.start_as_current_span(name) as turn:
            self.traces[label] = turn.get_span_context().trace_id
            yield
        if self.after_turn is not None:
            self.after_turn()

    def remember(self, label: str, record_id: str, message: str) -> None:
        """One turn: the LLM extracts a fact, the agent stores it (an ``update_memory`` span)."""
        with self._turn("agent.remember", label):
            fact = self._chat(EXTRACT, message)
            vector = self._embed(fact)
            with self.tracer.start_as_current_span("update_memory") as span:
                span.set_attribute("gen_ai.operation.name", "update_memory")
                span.set_attribute("gen_ai.memory.store.id", STORE)
                span.set_attribute("gen_ai.memory.record.id", record_id)
                span.set_attribute(
                    "gen_ai.memory.records", json.dumps([{"id": record_id, "content": fact}])
                )
                self.memories[record_id] = (fact, vector)

    def forget(self, label: str, record_id: str) -> None:
        """One turn of store upkeep: a record removed (a ``delete_memory`` span naming it)."""
        with self._turn("agent.forget", label):
            fact, _ = self.memories.pop(record_id)
            with self.tracer.start_as_current_span("delete_memory") as span:
                span.set_attribute("gen_ai.operation.name", "delete_memory")
                span.set_attribute("gen_ai.memory.store.id", STORE)
                span.set_attribute("gen_ai.memory.record.id", record_id)
                span.set_attribute(
                    "gen_ai.memory.records", json.dumps([{"id": record_id, "content": fact}])
                )

    def ask(self, label: str, question: str, expected: str) -> str:
        """One turn: search the memories, answer from them; the answer is a failed case."""
        with self._turn("agent.answer", label):
            found = self._search(question)
            case = {
                "memtrace.case.id": label,
                "memtrace.case.question": question,
                "memtrace.case.expected_answer": expected,
                "memtrace.case.verdict": "failed",
            }
            ctx = context.get_current()
            for key, value in case.items():
                ctx = baggage.set_baggage(key, value, ctx)
            token = context.attach(ctx)
            try:
                return self._chat(ANSWER + "\n" + "\n".join(found), question)
            finally:
                context.detach(token)

    def _search(self, question: str) -> list[str]:
        with self.tracer.start_as_current_span("search_memory") as span:
            query = self._embed(question)
            scored = [(_cosine(query, v), rid, fact) for rid, (fact, v) in self.memories.items()]
            ranked = sorted(scored, reverse=True)[: self.top_k]
            if self.search_style == "openinference":
                span.set_attribute("openinference.span.kind", "RETRIEVER")
                span.set_attribute("input.value", question)
                for i, (score, rid, fact) in enumerate(ranked):
                    span.set_attribute(f"retrieval.documents.{i}.document.id", rid)
                    span.set_attribute(f"retrieval.documents.{i}.document.content", fact)
                    span.set_attribute(f"retrieval.documents.{i}.document.score", score)
            else:
                span.set_attribute("gen_ai.operation.name", "search_memory")
                span.set_attribute("gen_ai.memory.store.id", STORE)
                span.set_attribute("gen_ai.memory.query.text", question)
                records = [{"id": rid, "content": fact, "score": s} for s, rid, fact in ranked]
                span.set_attribute("gen_ai.memory.records", json.dumps(records))
            return [fact for _, _, fact in ranked]

    def _chat(self, system: str, user: str) -> str:
        completion = self.client.chat.completions.create(
            model="fake-chat",
            messages=[{"role": "system", "content": system}, {"role": "user", "content": user}],
        )
        return completion.choices[0].message.content or ""

    def _embed(self, text: str) -> list[float]:
        return list(
            self.client.embeddings.create(model="fake-embed", input=[text]).data[0].embedding
        )


def _cosine(a: list[float], b: list[float]) -> float:
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return sum(x * y for x, y in zip(a, b, strict=True)) / norm if norm else 0.0
