"""A tracing processor that turns the Agents SDK's spans into MemTrace operations.

``add_trace_processor(MemTraceProcessor(tracer))`` (or ``set_trace_processors([...])`` to
replace the SDK's export to OpenAI). Recorded when a span ends:

- a model call (``response`` span of the Responses API, ``generation`` span of chat
  completions): ``agents.model`` (response). It consumes the agent's instructions (a prompt
  version named ``agents.<agent name>``), the context of every session read of its run
  (``TracedSession.get_items``), the units earlier steps produced for the items it was sent (a
  tool call, a tool's result) and a ``message`` unit for each other item (the user's input);
  items the run read back from the session are not read again as messages: the context stands
  for them. It produces an ``answer`` unit per text it said and an ``other`` unit per tool call.
- a tool call (``function`` span): ``agents.tool.<name>`` (``other``, or the kind given in
  ``tool_kinds``), consuming the call the model made and producing its result (a ``context`` for
  a retrieval tool, else ``other``).
- a handoff: ``agents.handoff`` (other), consuming what the model call that decided it produced.
- an agent span names the agent of the calls inside it (``agent`` attribute); it is no
  operation of its own. Task, turn, guardrail, custom and speech spans are not recorded.

Model calls carry their inputs and outputs only while the SDK includes data in spans (its
default; ``RunConfig(trace_include_sensitive_data=False)`` or
``OPENAI_AGENTS_TRACE_INCLUDE_SENSITIVE_DATA=false`` turn it off): without them, a call is
recorded with ``data_included: false`` and no units. A failure in here is logged and never
reaches the agent.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from agents.tracing import (
    AgentSpanData,
    FunctionSpanData,
    GenerationSpanData,
    HandoffSpanData,
    ResponseSpanData,
    Span,
    Trace,
    TracingProcessor,
)

from memtrace_client.adapters.answering import package_version
from memtrace_client.adapters.openai_agents.items import (
    PROMPT_ROLES,
    SYSTEM,
    Key,
    chat_keys,
    digest,
    item_key,
    prompt_name,
)
from memtrace_client.adapters.openai_agents.lineage import lineage_of
from memtrace_client.adapters.openai_agents.session import message_unit
from memtrace_client.models import OperationKind, UnitIn
from memtrace_client.tracer import Tracer

logger = logging.getLogger("memtrace_client.adapters.openai_agents")


def _ts(value: str | None) -> datetime | None:
    try:
        return datetime.fromisoformat(value) if value else None
    except ValueError:
        return None


class MemTraceProcessor(TracingProcessor):
    """Records the spans of every agent run in this process with ``tracer``.

    ``tool_kinds`` names the operation kind of a tool by its name (e.g. ``{"search_notes":
    "retrieval"}``: its result is then a ``context`` the attribution may blame as a retrieval).
    """

    def __init__(
        self, tracer: Tracer, *, tool_kinds: Mapping[str, OperationKind] | None = None
    ) -> None:
        self.tracer = tracer
        self.tool_kinds = dict(tool_kinds or {})
        self.lineage = lineage_of(tracer)
        self.version = package_version("openai-agents")
        self._lock = threading.Lock()
        self._parents: dict[str, tuple[str, str | None]] = {}  # span -> (trace, parent)
        self._agents: dict[str, str] = {}  # agent span -> agent name
        self._last_outputs: dict[str, list[str]] = {}  # trace -> the last model call's outputs
        self._groups: dict[str, str] = {}  # trace -> group id

    # -- TracingProcessor ------------------------------------------------------------------------

    def on_trace_start(self, trace: Trace) -> None:
        self.lineage.trace_started(trace.trace_id)
        group = (trace.export() or {}).get("group_id")
        if group:
            with self._lock:
                self._groups[trace.trace_id] = str(group)

    def on_trace_end(self, trace: Trace) -> None:
        self.lineage.trace_ended(trace.trace_id)
        with self._lock:
            self._groups.pop(trace.trace_id, None)
            self._last_outputs.pop(trace.trace_id, None)
            spans = [s for s, (t, _) in self._parents.items() if t == trace.trace_id]
            for span_id in spans:
                self._parents.pop(span_id, None)
                self._agents.pop(span_id, None)

    def on_span_start(self, span: Span[Any]) -> None:
        with self._lock:
            self._parents[span.span_id] = (span.trace_id, span.parent_id)
            if isinstance(span.span_data, AgentSpanData):
                self._agents[span.span_id] = span.span_data.name

    def on_span_end(self, span: Span[Any]) -> None:
        try:
            self._record(span)
        except Exception:  # recording must never break the agent
            logger.exception("memtrace: could not record an Agents SDK span")

    def shutdown(self) -> None:
        # At interpreter exit (the SDK calls it then): briefly, the spool keeps what is left.
        self.tracer.flush(5.0)

    def force_flush(self) -> None:
        self.tracer.flush()

    # -- the answer of a run ---------------------------------------------------------------------

    def answer_of(self, result: Any) -> str:
        """The id of the answer unit a run ended with (``Runner.run``'s result), for
        ``tracer.case(question, expected, processor.answer_of(result))``. ``ValueError`` if
        no model call of it was recorded with its output."""
        responses = [r.response_id for r in getattr(result, "raw_responses", []) if r.response_id]
        found = self.lineage.answer_for(responses, str(result.final_output))
        if found is None:
            raise ValueError("no recorded answer for this run (was the processor added?)")
        return found

    # -- recording -------------------------------------------------------------------------------

    def _record(self, span: Span[Any]) -> None:
        data = span.span_data
        if isinstance(data, ResponseSpanData):
            self._response(span, data)
        elif isinstance(data, GenerationSpanData):
            self._generation(span, data)
        elif isinstance(data, FunctionSpanData):
            self._tool(span, data)
        elif isinstance(data, HandoffSpanData):
            self._handoff(span, data)

    def _agent_of(self, span: Span[Any]) -> str | None:
        with self._lock:
            parent = span.parent_id
            while parent is not None:
                if parent in self._agents:
                    return self._agents[parent]
                parent = self._parents.get(parent, ("", None))[1]
        return None

    def _common(self, span: Span[Any], session_id: str | None = None) -> dict[str, Any]:
        with self._lock:
            group = self._groups.get(span.trace_id)
        attributes: dict[str, Any] = {
            "system": self.tracer.system or SYSTEM,
            "session_id": session_id or group,
            "ts": _ts(span.started_at),
            "trace_id": span.trace_id,
            "span_id": span.span_id,
            "agent": self._agent_of(span),
            "agents_version": self.version,
        }
        if span.error:
            attributes["error"] = span.error.get("message")
        return attributes

    def _response(self, span: Span[ResponseSpanData], data: ResponseSpanData) -> None:
        response = data.response
        if response is None:
            self._model_call(span, "responses", None, None, None, [], data.usage, None)
            return
        raw = data.input
        sent = [("user", raw)] if isinstance(raw, str) else [item_key(i) for i in raw or []]
        said = [item_key(o) for o in response.output]
        said = [k for k in said if k[0] in ("assistant", "tool_call")]
        instructions = response.instructions
        self._model_call(
            span, "responses", response.model, instructions, sent, said, data.usage, response.id
        )

    def _generation(self, span: Span[GenerationSpanData], data: GenerationSpanData) -> None:
        if data.input is None and data.output is None:
            self._model_call(span, "chat_completions", data.model, None, None, [], data.usage, None)
            return
        sent = [k for m in data.input or [] for k in chat_keys(m)]
        instructions = "\n".join(t for r, t in sent if r in PROMPT_ROLES) or None
        sent = [k for k in sent if k[0] not in PROMPT_ROLES]
        said = [k for m in data.output or [] for k in chat_keys(m)]
        self._model_call(
            span, "chat_completions", data.model, instructions, sent, said, data.usage, None
        )

    def _model_call(
        self,
        span: Span[Any],
        api: str,
        model: str | None,
        instructions: str | Any,
        sent: list[Key] | None,
        said: list[Key],
        usage: Mapping[str, Any] | None,
        response_id: str | None,
    ) -> None:
        reads = self.lineage.reads_of(span.trace_id)
        common = self._common(span, reads[-1].session_id if reads else None)
        agent = common["agent"] or "agent"
        inputs: list[str] = []
        if sent is not None:
            in_history = set().union(*(r.keys for r in reads)) if reads else set()
            # A read is consumed if the call was sent what it returned (or it returned nothing:
            # the call then read an empty history).
            inputs += [r.context for r in reads if not r.keys or r.keys & set(sent)]
            for key in sent:
                if key in in_history:
                    continue
                unit = self.lineage.producer_of(key) or message_unit(self.tracer, key).id
                if unit not in inputs:
                    inputs.append(unit)
        outputs = [self._said(span, i, key, response_id) for i, key in enumerate(said)]
        with self._lock:
            self._last_outputs[span.trace_id] = outputs
        self.tracer.record_operation(
            "agents.model",
            kind="response",
            inputs=inputs,
            outputs=outputs,
            prompt=(prompt_name(agent), instructions) if isinstance(instructions, str) else None,
            api=api,
            model=model,
            response_id=response_id,
            data_included=sent is not None,
            input_tokens=(usage or {}).get("input_tokens"),
            output_tokens=(usage or {}).get("output_tokens"),
            **common,
        )

    def _said(self, span: Span[Any], index: int, key: Key, response_id: str | None) -> str:
        role, text = key
        if role == "tool_call":
            unit = self.tracer.unit("other", text, id=f"agents:tool_call:{span.span_id}:{index}")
        else:
            unit = self.tracer.answer(text, id=f"agents:answer:{span.span_id}:{index}", role=role)
            self.lineage.answered(unit.id, text, response_id)
        self.lineage.produced(key, unit.id)
        return unit.id

    def _tool(self, span: Span[FunctionSpanData], data: FunctionSpanData) -> None:
        kind = self.tool_kinds.get(data.name, "other")
        call_key: Key = ("tool_call", f"{data.name}({data.input})")
        call = self.lineage.producer_of(call_key) or self._unit(
            "other", call_key[1], f"agents:tool_call:{digest(call_key[1])}"
        )
        outputs: list[UnitIn] = []
        if data.output is not None:
            text = str(data.output)
            result = self.tracer.unit(
                "context" if kind == "retrieval" else "other",
                text,
                id=f"agents:tool_output:{span.span_id}",
                tool=data.name,
            )
            self.lineage.produced(("tool_output", text), result.id)
            outputs.append(result)
        self.tracer.record_operation(
            f"agents.tool.{data.name}",
            kind=kind,
            inputs=[call],
            outputs=outputs,
            tool=data.name,
            **self._common(span),
        )

    def _handoff(self, span: Span[HandoffSpanData], data: HandoffSpanData) -> None:
        with self._lock:
            decided = list(self._last_outputs.get(span.trace_id, ()))
        text = f"handoff from {data.from_agent} to {data.to_agent}"
        moved = self.tracer.unit("other", text, id=f"agents:handoff:{span.span_id}")
        self.tracer.record_operation(
            "agents.handoff",
            kind="other",
            inputs=decided,
            outputs=[moved],
            from_agent=data.from_agent,
            to_agent=data.to_agent,
            **self._common(span),
        )

    def _unit(self, kind: Any, text: str, unit_id: str) -> str:
        return self.tracer.unit(kind, text, id=unit_id, stamp=False).id
