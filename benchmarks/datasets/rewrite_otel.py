"""The store-rewriting set as an OpenTelemetry-only agent sends it: GenAI spans, no MemTrace ids.

Most users trace with OpenTelemetry: they send spans (``gen_ai.operation.name`` = ``chat``,
``search_memory``, ``update_memory``, ``delete_memory``), not MemTrace units and operations, and
name no conversation or session. This module re-sends each conversation of the
:mod:`.rewrite` set that way and converts the export with the service's own mapping
(``ingest.otlp.convert_export``), so what the attribution reads is what the OTLP endpoint would
have written. The labels and the truth are carried over from the batch it was built from; no
label is made here.

Per conversation, one export (its spans in time order, as a batch exporter sends them):

- a trace per LoCoMo session's ``add``: a ``chat`` span reading the session's turns (user
  messages) and answering with the extracted facts (one output message each), then per memory
  decision an ``update_memory`` span writing the new version of its record
  (``gen_ai.memory.records``, the user as ``gen_ai.memory.store.id``) and, for a DELETE, a
  ``delete_memory`` span before it. The decision itself (Mem0's second LLM call) happens inside
  the memory system and is not traced; a NONE writes nothing and has no span;
- in the ``rewrite-otel-decisions`` shape, Mem0's deciding call is traced too, as an OpenAI
  instrumentation sends it inside ``add``: after the extracting call, a ``search_memory`` span
  per fact (the fact as query, the similar memories the store held before the session as
  records), then one ``chat`` span whose user message quotes those memories and the facts and
  whose answer is Mem0's JSON (``{"memory": [{"id", "text", "event", "old_memory"}]}``: ADD,
  UPDATE with the text it replaces, DELETE with the text it removes; a NONE is left out), and
  the writes after it, which carry that answer out. The mapping makes the deciding call the
  update (it reads retrieved context and a write follows), and each write reads its answer;
- a trace per question: a ``search_memory`` span (the question as query, the memories the
  search returned as records) and the ``chat`` span answering it from them, carrying the case
  (``memtrace.case.*``).

What the mapping makes of it differs from the native trace on purpose, as real OTLP traces do:
a write span reads every fact of its session's extraction (the latest LLM sibling's answers),
not the one fact it was decided from; a search reads only the records it returned, so what else
the store held is known only from the writes (``store_id``); the answering call reads the
question as a user message.

Labels: the operation of a label becomes the span made from it (a DeletionError's, the
``delete_memory`` span of that decision). A case whose labelled operation has no span (a NONE
decision that dropped the fact) is left out and counted in ``hidden["unmapped"]``.

Labels stay on the writes when the deciding call is traced: its JSON still holds what a write
dropped (an UPDATE's ``old_memory``, a DELETE's text), so the write is where it was lost.

Truth (``hidden["carriers"]``): a converted unit carries a case when it is a message with the
content of a carrying message, a memory version or extracted fact with the content of a carrying
memory, a context holding the text of a carrying memory or the answer phrase, or the deciding
call's answer holding the text of a carrying memory: the native batch's truth
(``benchmarks.attribution.oracle``) read over the new ids.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import InstrumentationScope
from opentelemetry.proto.resource.v1.resource_pb2 import Resource
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span, Status

from ingest.otlp import convert_export
from tests.support.otlp_export import kv

from .labels import Label, LabelledBatch
from .locomo import holds

SHAPES = ("rewrite-otel", "rewrite-otel-shared", "rewrite-otel-decisions")
"""A project per conversation, or one project holding every user (told apart by store id); and
a project per conversation where Mem0's deciding call is traced too (:data:`DECIDING`)."""
DECIDING = "rewrite-otel-decisions"
SERVICE = "mem0-agent"
Truth = tuple[frozenset[str], tuple[str, ...]]
"""A case's carrying unit ids and needles (``benchmarks.attribution.oracle.CaseTruth``)."""


def _messages(role: str, texts: Iterable[str]) -> str:
    return json.dumps([{"role": role, "parts": [{"type": "text", "content": t}]} for t in texts])


def _record(unit: dict[str, Any]) -> tuple[str, str]:
    """(store, record) of a native memory version: the user, and its ``memory_id``."""
    attributes = unit["attributes"]
    return str(attributes.get("user_id") or ""), str(attributes["memory_id"])


class _Spans:
    """The spans of one conversation, from its native operations in time order; ``made`` says
    which span each operation became, by (operation id, ``op`` or ``delete``). Trace ids come
    from the conversation's tag, so no two conversations share an operation id."""

    def __init__(self, item: LabelledBatch, deciding: bool = False) -> None:
        tag = f"{item.batch['project']}/{item.hidden['conversation']}"
        self._base = int(hashlib.sha256(tag.encode()).hexdigest()[:16], 16) << 64
        self._traces = 0
        self.spans: list[Span] = []
        self.made: dict[tuple[str, str], str] = {}
        self.units = {u["id"]: u for u in item.batch["units"]}
        self.cases = {c["answer_unit"]: c for c in item.batch["cases"]}
        self._add_trace: dict[str, int] = {}  # an extracted fact -> its session's trace
        self._next_span: dict[int, int] = {}  # a session's trace -> its next write's span id
        self._turn_trace: dict[str, int] = {}  # a search's context -> its trace
        # with the deciding call traced: a session's trace -> its extraction and its decisions
        self._deciding = deciding
        self._sessions: dict[int, tuple[dict[str, Any], list[dict[str, Any]]]] = {}
        self._latest: dict[str, str] = {}  # a record's text as the last decision wrote it
        for op in sorted(item.batch["operations"], key=lambda o: (o["ts"], o["id"])):
            getattr(self, f"_{op['kind']}")(op)
        for trace, (extraction, decisions) in self._sessions.items():
            self._decide(trace, extraction, decisions)

    def request(self) -> ExportTraceServiceRequest:
        spans = sorted(self.spans, key=lambda s: (s.start_time_unix_nano, s.trace_id, s.span_id))
        scope = ScopeSpans(scope=InstrumentationScope(name=SERVICE), spans=spans)
        resource = Resource(attributes=[kv("service.name", SERVICE)])
        return ExportTraceServiceRequest(
            resource_spans=[ResourceSpans(resource=resource, scope_spans=[scope])]
        )

    def _span(
        self, trace: int, sid: int, name: str, ts: str, attrs: dict[str, Any], after_ms: int = 0
    ) -> str:
        """A span of ``trace`` (span 1 is its root), half a second long from ``after_ms`` past
        ``ts``; its id."""
        start = (int(datetime.fromisoformat(ts).timestamp() * 1000) + after_ms) * 1_000_000
        self.spans.append(
            Span(
                trace_id=trace.to_bytes(16, "big"),
                span_id=sid.to_bytes(8, "big"),
                parent_span_id=b"" if sid == 1 else (1).to_bytes(8, "big"),
                name=name,
                kind=Span.SPAN_KIND_INTERNAL,
                start_time_unix_nano=start,
                end_time_unix_nano=start + 500_000_000,
                attributes=[kv(k, v) for k, v in attrs.items()],
                status=Status(code=Status.STATUS_CODE_OK),
            )
        )
        return f"otel:{trace:032x}:{sid:016x}"

    def _trace(self, root: str, ts: str) -> int:
        self._traces += 1
        trace = self._base + self._traces
        self._span(trace, 1, root, ts, {})
        return trace

    def _extraction(self, op: dict[str, Any]) -> None:
        """A session's ``add``: the fact-extracting call; the decisions' writes join its trace."""
        trace = self._trace("mem0.add", op["ts"])
        self.made[(op["id"], "op")] = self._span(
            trace,
            2,
            "chat extract_facts",
            op["ts"],
            {
                "gen_ai.operation.name": "chat",
                "gen_ai.input.messages": _messages("user", self._texts(op["inputs"])),
                "gen_ai.output.messages": _messages("assistant", self._texts(op["outputs"])),
            },
        )
        self._next_span[trace] = 3
        self._sessions[trace] = (op, [])
        for fact in op["outputs"]:
            self._add_trace[fact] = trace

    def _update(self, op: dict[str, Any]) -> None:
        """A decision: what it wrote (a tombstone, a new version); a NONE writes nothing."""
        trace = next(self._add_trace[i] for i in op["inputs"] if i in self._add_trace)
        self._sessions[trace][1].append(op)
        for out in op["outputs"]:
            unit = self.units[out]
            store, record = _record(unit)
            sid = self._take(trace)
            attrs = {"gen_ai.memory.store.id": store}
            if unit["kind"] == "tombstone":
                attrs |= {
                    "gen_ai.operation.name": "delete_memory",
                    "gen_ai.memory.record.id": record,
                }
                self.made[(op["id"], "delete")] = self._span(
                    trace, sid, "delete_memory", op["ts"], attrs
                )
            else:
                written = json.dumps([{"id": record, "content": unit["content"]}])
                attrs |= {
                    "gen_ai.operation.name": "update_memory",
                    "gen_ai.memory.records": written,
                }
                self.made[(op["id"], "op")] = self._span(
                    trace, sid, "update_memory", op["ts"], attrs
                )

    def _decide(
        self, trace: int, extraction: dict[str, Any], decisions: list[dict[str, Any]]
    ) -> None:
        """With the deciding call traced (Mem0's ``add``): after the extraction, a
        ``search_memory`` per fact for the similar memories the store held before this session,
        then one ``chat`` deciding every fact's event from them, whose answer the writes carry
        out. Its answer is Mem0's JSON: ADD and UPDATE with the new text (UPDATE with the
        ``old_memory`` it replaces), DELETE with the text it removes; a NONE is left out."""
        if not self._deciding or not decisions:
            return
        session = {out for op in decisions for out in op["outputs"]}
        older: dict[str, dict[str, Any]] = {}  # similar versions the store held before, by id
        for i, op in enumerate(decisions):
            fact, *similar = [self.units[u] for u in op["inputs"]]
            found = [u for u in similar if u["id"] not in session and u["kind"] == "memory"]
            older |= {u["id"]: u for u in found}
            records = [{"id": _record(u)[1], "content": u["content"]} for u in found]
            self._span(
                trace,
                self._take(trace),
                "search_memory",
                extraction["ts"],
                {
                    "gen_ai.operation.name": "search_memory",
                    "gen_ai.memory.store.id": self._store(op),
                    "gen_ai.memory.query.text": fact["content"],
                    "gen_ai.memory.records": json.dumps(records),
                },
                after_ms=500 + i,
            )
        current = [{"id": _record(u)[1], "text": u["content"]} for u in older.values()]
        facts = [self.units[u]["content"] for u in extraction["outputs"]]
        prompt = (
            f"Current memory:\n{json.dumps(current, ensure_ascii=False)}\n"
            f"New facts:\n{json.dumps(facts, ensure_ascii=False)}"
        )
        events = json.dumps({"memory": self._events(decisions)}, ensure_ascii=False)
        after_ms = 500 + len(decisions) + 1  # after the searches, before the first write
        decided = datetime.fromisoformat(extraction["ts"]) + timedelta(milliseconds=after_ms)
        if min(datetime.fromisoformat(op["ts"]) for op in decisions) <= decided:
            raise ValueError("a session's first write comes before its deciding call")
        self._span(
            trace,
            self._take(trace),
            "chat decide_memories",
            extraction["ts"],
            {
                "gen_ai.operation.name": "chat",
                "gen_ai.input.messages": _messages("user", [prompt]),
                "gen_ai.output.messages": _messages("assistant", [events]),
            },
            after_ms=after_ms,
        )

    def _events(self, decisions: list[dict[str, Any]]) -> list[dict[str, str]]:
        """Mem0's memory events of a session's decisions, in order."""
        events = []
        for op in decisions:
            before = {
                _record(self.units[u])[1]: self.units[u]["content"]
                for u in op["inputs"]
                if self.units[u]["kind"] == "memory"
                and self.units[u]["attributes"].get("memory_id")
            }
            for out in op["outputs"]:
                unit = self.units[out]
                record = _record(unit)[1]
                if unit["kind"] == "tombstone":
                    text = before.get(record, self._latest.get(record, ""))
                    events.append({"id": record, "text": text, "event": "DELETE"})
                elif record in self._latest:
                    old = self._latest[record]
                    events.append(
                        {
                            "id": record,
                            "text": unit["content"],
                            "event": "UPDATE",
                            "old_memory": old,
                        }
                    )
                else:
                    events.append({"id": record, "text": unit["content"], "event": "ADD"})
                self._latest[record] = unit["content"]
        return events

    def _take(self, trace: int) -> int:
        """The next span id of a session's trace."""
        sid = self._next_span[trace]
        self._next_span[trace] += 1
        return sid

    def _store(self, op: dict[str, Any]) -> str:
        """The user whose store a decision wrote."""
        return next(
            _record(self.units[u])[0]
            for u in op["outputs"] + op["inputs"]
            if self.units[u]["attributes"].get("memory_id")
        )

    def _retrieval(self, op: dict[str, Any]) -> None:
        """A question's search: the records it returned (the lines of its context, in order)."""
        read = [self.units[i] for i in op["inputs"] if self.units[i]["kind"] == "memory"]
        by_content = {u["content"]: u for u in read}
        context = op["outputs"][0]
        returned = [
            {"id": _record(by_content[line])[1], "content": line}
            for line in self.units[context]["content"].split("\n")
            if line in by_content
        ]
        trace = self._trace("agent.turn", op["ts"])
        self._turn_trace[context] = trace
        self.made[(op["id"], "op")] = self._span(
            trace,
            2,
            "search_memory",
            op["ts"],
            {
                "gen_ai.operation.name": "search_memory",
                "gen_ai.memory.store.id": _record(read[0])[0] if read else "",
                "gen_ai.memory.query.text": self._texts(op["inputs"], "query")[0],
                "gen_ai.memory.records": json.dumps(returned),
            },
        )

    def _response(self, op: dict[str, Any]) -> None:
        """The call answering from what the search returned; it carries the case."""
        trace = next(self._turn_trace[i] for i in op["inputs"] if i in self._turn_trace)
        answer = self.units[op["outputs"][0]]
        attrs: dict[str, Any] = {
            "gen_ai.operation.name": "chat",
            "gen_ai.input.messages": _messages("user", self._texts(op["inputs"], "query")),
            "gen_ai.output.messages": _messages("assistant", [answer["content"]]),
        }
        case = self.cases.get(answer["id"])
        if case is not None:
            attrs |= {
                f"memtrace.case.{key}": case[key]
                for key in ("id", "question", "expected_answer", "verdict")
            }
        self.made[(op["id"], "op")] = self._span(trace, 3, "chat answer", op["ts"], attrs)

    def _texts(self, ids: list[str], kind: str | None = None) -> list[str]:
        units = (self.units[i] for i in ids)
        return [u["content"] for u in units if kind is None or u["kind"] == kind]


def as_otel(
    item: LabelledBatch, truths: Mapping[str, Truth], deciding: bool = False
) -> LabelledBatch:
    """``item`` sent as OTLP spans and converted by the service's mapping, with its labels and
    ``truths`` (case id -> the oracle's carriers and needles over ``item``) over the new ids;
    ``deciding``: with Mem0's deciding call and its searches traced."""
    spans = _Spans(item, deciding)
    converted = convert_export(spans.request(), item.batch["project"])
    batch = converted.batch
    # The service looks up, for a record's first write in an export, its latest stored version;
    # the project holds nothing before this export, so those find nothing. Anything else the
    # store would have to settle means the export is not whole by itself.
    written = {u["attributes"]["memory_id"] for u in batch["units"] if u["kind"] == "memory"}
    looked_up = [look["memory_id"] for look in converted.lookups]
    if (
        converted.pending
        or converted.warnings
        or not set(looked_up) <= written
        or len(set(looked_up)) != len(looked_up)
    ):
        raise ValueError(f"{item.batch['project']}: the export is not whole by itself")
    labels: dict[str, Label] = {}
    for case_id, label in item.labels.items():
        what = "delete" if label["error_type"] == "DeletionError" else "op"
        span_op = spans.made.get((label["operation_id"], what))
        if span_op is not None:  # else a NONE's loss: no span was made of it
            labels[case_id] = Label(
                error_type=label["error_type"], operation_id=span_op, system=SERVICE
            )
    unmapped = set(item.labels) - set(labels)
    batch["cases"] = [c for c in batch["cases"] if c["id"] not in unmapped]
    hidden = {
        "conversation": item.hidden["conversation"],
        "half": item.hidden["half"],
        "pipeline": "otel",
        "carriers": {
            c: _carriers(item, batch, truths[c][0], item.hidden["phrases"][c]) for c in labels
        },
        "needles": {c: list(truths[c][1]) for c in labels},
        "unmapped": len(unmapped),
    }
    return LabelledBatch(batch, labels, hidden)


def _carriers(
    item: LabelledBatch, batch: dict[str, Any], carriers: frozenset[str], phrase: str
) -> list[str]:
    """The converted units carrying what the native ``carriers`` carry (see the module
    docstring)."""
    native = {u["id"]: u for u in item.batch["units"]}
    messages = {native[i]["content"] for i in carriers if native[i]["kind"] == "message"}
    memories = {native[i]["content"] for i in carriers if native[i]["kind"] == "memory"}
    facts = {
        out for op in batch["operations"] if op["kind"] == "extraction" for out in op["outputs"]
    }
    # The deciding call's answer (JSON) holds whole memories, as a context does. Its prompt
    # quotes them too, but it was assembled from them, not said (graph_schema.rules: no source
    # message): no evidence a case would name, and no fact passes through it on its way to the
    # store (the call reads the facts themselves).
    deciding = {
        unit
        for op in batch["operations"]
        if op["attributes"]["otel"]["name"] == "chat decide_memories"
        for unit in op["outputs"]
    }
    written = [json.dumps(m, ensure_ascii=False)[1:-1] for m in memories]
    found = []
    for unit in batch["units"]:
        text, kind = unit.get("content") or "", unit["kind"]
        if (
            (kind == "message" and text in messages)
            or ((kind == "memory" or unit["id"] in facts) and text in memories)
            or (kind == "context" and (any(m in text for m in memories) or holds(text, phrase)))
            or (unit["id"] in deciding and kind != "context" and any(m in text for m in written))
        ):
            found.append(unit["id"])
    return sorted(found)
