"""Trace a Mem0 ``Memory`` (package ``mem0ai``): three lines, no change to the pipeline.

    from memtrace_client import MemTraceClient
    from memtrace_client.adapters.mem0 import trace_mem0
    memory = trace_mem0(Memory.from_config(config), MemTraceClient(url, project="my-agent"))

``memory.add(...)`` and ``memory.search(...)`` then behave as before and are recorded as:

- ``mem0.extract_facts`` (extraction): the messages -> one unit per extracted fact. The facts
  are read from the response of Mem0's own extraction LLM call, so they are what Mem0 saw;
- one operation per memory change, read from the rows Mem0 writes to its history table (the
  real old and new texts, not the LLM's claim of them): ADD and UPDATE -> ``mem0.add_memory`` /
  ``mem0.update_memory`` (update) producing a new version of the entry, DELETE ->
  ``mem0.delete_memory`` (deletion) producing a tombstone. In the classic 1.x pipeline the
  decision call's NONE verdicts become ``mem0.update_memory`` operations with no output; in the
  2.x ADD-only pipeline a fact skipped by Mem0's MD5 de-duplication becomes a ``mem0.add_memory``
  operation with ``event: "SKIP_DUPLICATE"`` and no output;
- ``mem0.search`` (retrieval): the query and the memories returned -> one context unit.

Every operation carries ``mem0_version`` and ``pipeline`` (``classic`` for 1.x, ``add-only`` for
2.x), so a trace says which pipeline produced it. A memory version's unit id is derived from the
Mem0 memory id and the text (``mem0:<memory id>:<hash>``) and carries no time, so ``add`` and a
later ``search`` (even in another process) name the same unit without shared state.

``answer(...)`` records the answering step (response) and ``judge(...)`` the case, so a wrong
answer can be sent to ``POST /attribute/{case_id}``.

Prompts (``memtrace_client.prompts``): each operation that ran with one of Mem0's prompt
templates consumes that template's version, so a failure blamed on it counts against the version:

- ``fact-extraction``: the system message of Mem0's extraction call (1.x: its fact-retrieval
  prompt, or ``custom_fact_extraction_prompt``; 2.x: its additive extraction prompt), consumed by
  ``mem0.extract_facts``; in 2.x, Mem0's ``custom_instructions`` (when set) are a second version
  consumed beside it, ``fact-extraction-instructions``, since 2.x has no replaceable system prompt;
- ``memory-update`` (1.x only): the template of the ADD/UPDATE/DELETE/NONE decision
  (``custom_update_memory_prompt``, else Mem0's default), consumed by every change it decided;
- ``answer(..., prompt=...)``: the template your answering call used.

``mem0_prompt_config(...)`` gives the Mem0 config entries that run the next round with the
newest versions (``MemTraceClient.prompt(name)``).
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from memtrace_client.adapters.answering import as_tracer, digest, package_version
from memtrace_client.adapters.judging import decided_verdict
from memtrace_client.client import MemTraceClient
from memtrace_client.models import OperationKind, UnitIn, Verdict
from memtrace_client.prompts import Prompt, PromptLike
from memtrace_client.tracer import Tracer

SYSTEM = "mem0"
EXTRACTION_PROMPT = "fact-extraction"
INSTRUCTIONS_PROMPT = "fact-extraction-instructions"
UPDATE_PROMPT = "memory-update"
UPDATE_MARKER = "\n\nBelow is the current content of my memory"
"""Where Mem0 1.x's decision message leaves its template and starts the memories (used only when
the template cannot be read from Mem0's config or defaults)."""


@dataclass
class _Capture:
    """What Mem0 did during one ``add``: its LLM calls and its history rows, in order."""

    llm_calls: list[tuple[list[dict[str, Any]], str]] = field(default_factory=list)
    history: list[tuple[str, str | None, str | None, str]] = field(default_factory=list)


def _json_object(text: str) -> dict[str, Any]:
    """The JSON object in an LLM response, tolerating code fences and chatter around it."""
    cleaned = re.sub(r"^```(?:json)?|```$", "", text.strip(), flags=re.MULTILINE).strip()
    for candidate in (cleaned, cleaned[cleaned.find("{") : cleaned.rfind("}") + 1]):
        try:
            value = json.loads(candidate, strict=False)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    return {}


def mem0_version() -> str:
    return package_version("mem0ai")


def pipeline_of(version: str) -> str:
    """``classic`` (1.x: extract facts, then decide ADD/UPDATE/DELETE/NONE) or ``add-only``
    (2.x: one extraction call, ADD only, MD5 de-duplication)."""
    major = version.split(".", 1)[0]
    return "classic" if major.isdigit() and int(major) < 2 else "add-only"


class TracedMemory:
    """A ``mem0.Memory`` whose ``add`` and ``search`` are traced; every other attribute is the
    wrapped memory's own. ``tracer`` is where the records go."""

    def __init__(self, memory: Any, tracer: Tracer) -> None:
        self.memory = memory
        self.tracer = tracer
        self.version = mem0_version()
        self.pipeline = pipeline_of(self.version)
        # Mem0 1.x runs the body of add() on a worker thread, so a context variable would not
        # reach the probes: one add() at a time is traced, its capture held here.
        self._add_lock = threading.Lock()
        self._active: _Capture | None = None
        self._install_probes()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.memory, name)

    # -- probes ----------------------------------------------------------------------------------

    def _install_probes(self) -> None:
        """Wrap the instance's LLM and history writer; only calls made during a traced ``add``
        are recorded, and each wrapper returns exactly what the original did."""
        llm, db = self.memory.llm, self.memory.db
        generate = llm.generate_response

        def generate_response(*args: Any, **kwargs: Any) -> Any:
            response = generate(*args, **kwargs)
            capture = self._active
            if capture is not None:
                messages = kwargs.get("messages", args[0] if args else [])
                capture.llm_calls.append((list(messages), str(response or "")))
            return response

        llm.generate_response = generate_response

        add_history = db.add_history

        def traced_add_history(
            memory_id: str, old: Any, new: Any, event: str, *a: Any, **k: Any
        ) -> Any:
            capture = self._active
            if capture is not None:
                capture.history.append((str(memory_id), old, new, str(event)))
            return add_history(memory_id, old, new, event, *a, **k)

        db.add_history = traced_add_history
        batch_add = getattr(db, "batch_add_history", None)
        if batch_add is not None:

            def traced_batch_add_history(records: list[dict[str, Any]], *a: Any, **k: Any) -> Any:
                capture = self._active
                result = batch_add(records, *a, **k)
                if capture is not None:
                    for r in records:
                        event = str(r.get("event"))
                        old, new = r.get("old_memory"), r.get("new_memory")
                        capture.history.append((str(r.get("memory_id")), old, new, event))
                return result

            db.batch_add_history = traced_batch_add_history

    @contextmanager
    def _capturing(self) -> Iterator[_Capture]:
        with self._add_lock:
            self._active = _Capture()
            try:
                yield self._active
            finally:
                self._active = None

    # -- units -----------------------------------------------------------------------------------

    def _version(self, memory_id: str, text: str) -> UnitIn:
        """One version of a Mem0 memory, named by its id and text (no time: see module doc)."""
        return self.tracer.unit(
            "memory",
            text,
            id=f"mem0:{memory_id}:{digest(text)}",
            stamp=False,
            memory_id=memory_id,
        )

    def _common(self) -> dict[str, Any]:
        return {"mem0_version": self.version, "pipeline": self.pipeline}

    def _instructions(self) -> list[UnitIn]:
        """2.x's ``custom_instructions`` as a prompt version of their own (see module doc)."""
        text = getattr(self.memory, "custom_instructions", None)
        if self.pipeline != "add-only" or not isinstance(text, str) or not text.strip():
            return []
        return [self.tracer.prompt_version((INSTRUCTIONS_PROMPT, text))]

    def _update_prompt(self, messages: list[dict[str, Any]]) -> Prompt | None:
        """The template of 1.x's decision call: the configured one, else Mem0's default, else
        (neither readable) the call's message up to where Mem0 appends the memories."""
        if self.pipeline != "classic":
            return None
        config = getattr(self.memory, "config", None)
        template = getattr(config, "custom_update_memory_prompt", None)
        if not template:
            try:
                from mem0.configs.prompts import DEFAULT_UPDATE_MEMORY_PROMPT  # type: ignore[import-untyped]

                template = DEFAULT_UPDATE_MEMORY_PROMPT
            except ImportError:
                text = str(messages[-1].get("content", "")) if messages else ""
                template = text.split(UPDATE_MARKER, 1)[0]
        return Prompt(UPDATE_PROMPT, str(template)) if template else None

    # -- add -------------------------------------------------------------------------------------

    def add(self, messages: Any, **kwargs: Any) -> Any:
        """``Memory.add`` unchanged, recorded as extraction and update/deletion operations.
        Traced calls on one ``TracedMemory`` run one at a time (see ``__init__``)."""
        turns = _as_turns(messages)
        session = kwargs.get("run_id") or kwargs.get("user_id") or kwargs.get("agent_id")
        sources = [
            self.tracer.message(t["content"], role=t.get("role"), **_named(t)) for t in turns
        ]
        with self._capturing() as capture:
            result = self.memory.add(messages, **kwargs)
        self._record_add(sources, capture, session)
        return result

    def _record_add(self, sources: list[UnitIn], capture: _Capture, session: Any) -> None:
        session_id = str(session) if session is not None else None
        calls = capture.llm_calls
        facts: list[UnitIn] = []
        if calls:
            messages, response = calls[0]
            texts = _extracted_texts(_json_object(response))
            facts = [self.tracer.unit("memory", t, role="extracted_fact") for t in texts]
            instructions = self._instructions()
            self.tracer.record_operation(
                "mem0.extract_facts",
                kind="extraction",
                inputs=[*instructions, *sources],
                outputs=facts,
                system=SYSTEM,
                session_id=session_id,
                prompt=(EXTRACTION_PROMPT, _system_text(messages)),
                **self._common(),
            )
        update_prompt = self._update_prompt(calls[1][0]) if len(calls) > 1 else None
        by_text = {f.content: f for f in facts}
        used: set[str] = set()
        for memory_id, old, new, event in capture.history:
            self._record_change(
                memory_id, old, new, event, facts, by_text, used, session_id, update_prompt
            )
        if self.pipeline == "classic" and len(calls) > 1:
            decisions = _json_object(calls[1][1]).get("memory", [])
            for decision in decisions if isinstance(decisions, list) else []:
                if isinstance(decision, dict) and decision.get("event") == "NONE":
                    self.tracer.record_operation(
                        "mem0.update_memory",
                        kind="update",
                        inputs=facts,
                        system=SYSTEM,
                        session_id=session_id,
                        event="NONE",
                        prompt=update_prompt,
                        **self._common(),
                    )
        if self.pipeline == "add-only":
            for fact in facts:
                if fact.content not in used:
                    self.tracer.record_operation(
                        "mem0.add_memory",
                        kind="update",
                        inputs=[fact],
                        system=SYSTEM,
                        session_id=session_id,
                        event="SKIP_DUPLICATE",
                        **self._common(),
                    )

    def _record_change(
        self,
        memory_id: str,
        old: str | None,
        new: str | None,
        event: str,
        facts: list[UnitIn],
        by_text: dict[str, UnitIn],
        used: set[str],
        session_id: str | None,
        prompt: Prompt | None,
    ) -> None:
        # In the ADD-only pipeline each fact's text is stored verbatim; in the classic one the
        # decision call rewrites texts, so every new fact is an input of every change.
        exact = by_text.get(new or "")
        inputs: list[UnitIn] = facts
        if exact is not None and self.pipeline == "add-only":
            inputs = [exact]
        if exact is not None:
            used.add(exact.content)
        if old:
            inputs = [*inputs, self._version(memory_id, old)]
        kind: OperationKind
        if event == "DELETE":
            name, kind = "mem0.delete_memory", "deletion"
            tombstone_id = f"mem0:{memory_id}:deleted"
            outputs = [self.tracer.tombstone(memory_id, id=tombstone_id, stamp=False)]
        else:
            name = "mem0.add_memory" if event == "ADD" else "mem0.update_memory"
            kind = "update"
            outputs = [self._version(memory_id, new)] if new else []
        self.tracer.record_operation(
            name,
            kind=kind,
            inputs=inputs,
            outputs=outputs,
            system=SYSTEM,
            session_id=session_id,
            event=event,
            memory_id=memory_id,
            prompt=prompt,
            **self._common(),
        )

    # -- search and answer -----------------------------------------------------------------------

    def search(self, query: str, **kwargs: Any) -> Any:
        """``Memory.search`` unchanged, recorded as a retrieval. The returned dict gains a
        ``"memtrace"`` entry with the query and context unit ids, for ``answer``."""
        question = self.tracer.query(query)
        result = self.memory.search(query, **kwargs)
        rows = result.get("results", []) if isinstance(result, dict) else list(result or [])
        found = [self._version(str(r["id"]), str(r.get("memory", ""))) for r in rows if "id" in r]
        context = self.tracer.context("\n".join(u.content for u in found))
        self.tracer.record_operation(
            "mem0.search",
            kind="retrieval",
            inputs=[question, *found],
            outputs=[context],
            system=SYSTEM,
            top_k=kwargs.get("top_k", kwargs.get("limit")),
            scores=[r.get("score") for r in rows],
            **self._common(),
        )
        if isinstance(result, dict):
            result["memtrace"] = {"query_unit": question.id, "context_unit": context.id}
        return result

    def answer(
        self,
        search_result: dict[str, Any],
        answer: str | Callable[[str], str],
        *,
        name: str = "answer",
        prompt: PromptLike | None = None,
        **attributes: Any,
    ) -> UnitIn:
        """Record the answering step over a traced ``search`` result. ``answer`` is the answer
        text, or a function from the retrieved context to it (your LLM call); ``prompt`` the
        template that call used (``("answer", TEMPLATE)``, or ``client.prompt("answer")``).
        Returns the answer unit, for ``judge``."""
        refs = search_result["memtrace"]
        context = "\n".join(str(r.get("memory", "")) for r in search_result.get("results", []))
        with self.tracer.operation(
            name,
            kind="response",
            inputs=[refs["query_unit"], refs["context_unit"]],
            system=SYSTEM,
            prompt=prompt,
            **attributes,
        ) as op:
            text = answer(context) if callable(answer) else answer
            unit = self.tracer.answer(text)
            op.output(unit)
        return unit

    def judge(
        self,
        question: str,
        expected_answer: str,
        answer_unit: UnitIn,
        verdict: Verdict | None = None,
        *,
        judge: Callable[[str, str, str], bool] | None = None,
        **attributes: Any,
    ) -> str:
        """Record the case. The verdict is given, or decided by ``judge(question, expected,
        answer)`` (an LLM judge, say), or by default by whether the expected answer's words all
        appear in the answer. Returns the case id."""
        decided = decided_verdict(question, expected_answer, answer_unit.content, verdict, judge)
        return self.tracer.case(
            question, expected_answer, answer_unit, decided, system=SYSTEM, **attributes
        )


def trace_mem0(
    memory: Any, client: MemTraceClient | Tracer, *, spool_dir: str | None = None
) -> TracedMemory:
    """Wrap ``memory`` (a ``mem0.Memory``) so that its operations go to MemTrace."""
    return TracedMemory(memory, as_tracer(client, spool_dir))


def _named(turn: dict[str, Any]) -> dict[str, Any]:
    """The speaker's name as a unit attribute, when the message has one."""
    return {"name": turn["name"]} if turn.get("name") else {}


def _as_turns(messages: Any) -> list[dict[str, Any]]:
    if isinstance(messages, str):
        return [{"role": "user", "content": messages}]
    if isinstance(messages, dict):
        messages = [messages]
    return [m for m in messages if isinstance(m, dict) and isinstance(m.get("content"), str)]


def _extracted_texts(response: dict[str, Any]) -> list[str]:
    """Facts from Mem0's extraction response: ``{"facts": [str]}`` in 1.x,
    ``{"memory": [{"text": str}]}`` in 2.x."""
    items = response.get("facts", response.get("memory", []))
    texts = []
    for item in items if isinstance(items, list) else []:
        text = item.get("text") if isinstance(item, dict) else item
        if isinstance(text, str) and text.strip():
            texts.append(text)
    return texts


def _system_text(messages: list[dict[str, Any]]) -> str:
    """The instructions of an LLM call: its system message (else its first message)."""
    system = next((str(m.get("content", "")) for m in messages if m.get("role") == "system"), "")
    return system or (str(messages[0].get("content", "")) if messages else "")


def mem0_prompt_config(
    version: str | None = None,
    *,
    extraction: PromptLike | str | None = None,
    update: PromptLike | str | None = None,
) -> dict[str, str]:
    """The entries of a Mem0 config (``Memory.from_config({... , **entries})``) that make Mem0
    run with these templates, e.g. the newest versions ``client.prompt(name)`` returns.

    Mem0 1.x (``version`` from ``mem0_version()`` by default) replaces its prompts with
    ``custom_fact_extraction_prompt`` and ``custom_update_memory_prompt``. Mem0 2.x keeps its own
    extraction prompt and has no update call: ``extraction`` becomes its ``custom_instructions``
    (give it the ``fact-extraction-instructions`` prompt), and ``update`` is refused.
    """

    def text(value: PromptLike | str) -> str:
        if isinstance(value, str):
            return value
        return value.text if isinstance(value, Prompt) else value[1]

    classic = pipeline_of(version or mem0_version()) == "classic"
    entries: dict[str, str] = {}
    if extraction is not None:
        key = "custom_fact_extraction_prompt" if classic else "custom_instructions"
        entries[key] = text(extraction)
    if update is not None:
        if not classic:
            raise ValueError("Mem0 2.x has no memory-update prompt (its pipeline only adds)")
        entries["custom_update_memory_prompt"] = text(update)
    return entries
