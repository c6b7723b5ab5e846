"""``Tracer``: instrument any memory pipeline in a few lines.

    tracer = Tracer(MemTraceClient("http://127.0.0.1:8000", project="my-agent"), system="my-rag")
    turn = tracer.message("I moved to Lisbon in May", role="user")
    with tracer.operation("extract_facts", kind="extraction", inputs=[turn]) as op:
        op.output(tracer.memory("The user moved to Lisbon in May 2023", memory_id="m1"))

Every unit, operation and case is validated with the wire models when it is made (a mistake
raises here, in your code, not later in a background thread) and handed to the background
delivery (``memtrace_client.delivery``): recording never waits for the network.
"""

from __future__ import annotations

import contextvars
import functools
import inspect
import itertools
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

from memtrace_client.client import MemTraceClient
from memtrace_client.delivery import Delivery, FlushResult
from memtrace_client.errors import ServiceUnavailable
from memtrace_client.models import (
    CaseIn,
    OperationIn,
    OperationKind,
    UnitIn,
    UnitKind,
    Verdict,
    VerdictIn,
)
from memtrace_client.prompts import PromptLike, as_prompt
from memtrace_client.verdicts import VERDICT_TIMEOUT_S, CaseRef

P = ParamSpec("P")
R = TypeVar("R")

UnitLike = UnitIn | str
"""A unit object, or the id of a unit recorded before (possibly by another process)."""

_current: contextvars.ContextVar[Operation | None] = contextvars.ContextVar(
    "memtrace_operation", default=None
)


def _now() -> datetime:
    return datetime.now(UTC)


class _Ids:
    """Ids for records made without one: a random 64-bit prefix per tracer plus a counter, so
    unique across tracers and processes without drawing random bytes for every record."""

    def __init__(self) -> None:
        self._prefix = uuid.uuid4().hex[:16]
        self._counter = itertools.count(1)

    def __call__(self, kind: str) -> str:
        return f"{kind}-{self._prefix}-{next(self._counter)}"


LAST_ANSWER = "<the last answer>"
"""``Tracer.case``'s default answer: the last answer unit the tracer recorded in this thread or
task (a ``@traced`` response's returned text becomes one), whose id only the tracer knows."""


def _unit_id(unit: UnitLike) -> str:
    return unit if isinstance(unit, str) else unit.id


class Operation:
    """An operation being recorded: add inputs and outputs while it runs.

    It is sent when its ``with`` block (or decorated function) ends, with the inputs and outputs
    in the order they were added and ``duration_ms`` in its attributes. If the block raises, the
    operation is still sent, with ``error`` naming the exception type.
    """

    def __init__(self, name: str, kind: OperationKind, *, id: str, ts: datetime) -> None:
        self.id = id
        self.name = name
        self.kind = kind
        self.ts = ts
        self.inputs: list[str] = []
        self.outputs: list[str] = []
        self.attributes: dict[str, Any] = {}

    def input(self, *units: UnitLike) -> None:
        """Something this operation read (a message, an old memory, a query, a context)."""
        self.inputs.extend(_unit_id(u) for u in units)

    def output(self, *units: UnitLike) -> None:
        """Something this operation produced (a fact, a memory version, a context, an answer)."""
        self.outputs.extend(_unit_id(u) for u in units)

    def set(self, **attributes: Any) -> None:
        """Attributes stored with the operation (model, prompt name, top_k, event, ...)."""
        self.attributes.update(attributes)


RETURNED_KIND: dict[str, UnitKind] = {
    "retrieval": "context",
    "response": "answer",
    "extraction": "memory",
    "update": "memory",
}
"""The unit kind of a text a ``@traced`` function returns, by its operation's kind (else other)."""


def _unmasked(text: str) -> str:
    return text


class Tracer:
    """Records units, operations and cases of one memory system and delivers them in batches.

    ``system`` and ``session_id`` are stamped on every operation unless one overrides them;
    ``environment`` and ``release`` (e.g. ``"prod"``, ``"2026.11.3"``) go into every operation's
    attributes, so reports can tell deployments apart.

    ``mask`` is applied in this process, before anything is queued, spooled or sent, to every
    text the tracer records: unit content and a case's question and expected answer (e.g. a
    function that replaces e-mail addresses and phone numbers). Make it deterministic: a unit
    recorded twice must mask to the same text, or the service refuses the second as a clash.
    Attributes are not masked: keep personal data out of them.

    Delivery options (``spool_dir``, ``max_items``, ``max_bytes``, ``flush_interval_s``,
    ``max_queue``) go to ``Delivery``; give a ``spool_dir`` so that nothing recorded is lost when
    the service is down or the process restarts.
    """

    def __init__(
        self,
        client: MemTraceClient,
        *,
        system: str | None = None,
        session_id: str | None = None,
        environment: str | None = None,
        release: str | None = None,
        mask: Callable[[str], str] | None = None,
        spool_dir: Path | str | None = None,
        **delivery_options: Any,
    ) -> None:
        self.client = client
        self.system = system
        self.session_id = session_id
        self.mask = mask or _unmasked
        self._tags = {
            k: v for k, v in (("environment", environment), ("release", release)) if v is not None
        }
        self.delivery = Delivery(client, spool_dir=spool_dir, **delivery_options)
        self._new_id = _Ids()
        self._last_answer: contextvars.ContextVar[str | None] = contextvars.ContextVar(
            f"memtrace_last_answer_{id(self)}", default=None
        )
        self.unit_listeners: list[Callable[[UnitIn], None]] = []
        """Called with every unit recorded (masked), e.g. by adapters that find lineage by text."""
        self._prompts_sent: set[str] = set()

    # -- units -----------------------------------------------------------------------------------

    def unit(
        self,
        kind: UnitKind,
        content: str,
        *,
        id: str | None = None,
        ts: datetime | None = None,
        stamp: bool = True,
        **attributes: Any,
    ) -> UnitIn:
        """Record one unit. Units are immutable: a memory that changes gets a new unit per version
        (same ``memory_id`` attribute); reusing an id for other content is refused by the
        service. ``stamp=False`` leaves the time out, for a unit that several places may record
        (same id, same content: the service then sees identical re-sends)."""
        unit = UnitIn(
            id=id or self._new_id(kind),
            kind=kind,
            content=self.mask(content),
            ts=ts or (_now() if stamp else None),
            attributes=attributes,
        )
        self.delivery.put("units", unit.model_dump(mode="json", exclude_defaults=True))
        if kind == "answer":
            self._last_answer.set(unit.id)
        for listener in self.unit_listeners:
            listener(unit)
        return unit

    def message(self, content: str, *, role: str | None = None, **kw: Any) -> UnitIn:
        """A conversation turn (or any source the memory system reads)."""
        if role:
            kw["role"] = role
        return self.unit("message", content, **kw)

    def memory(self, content: str, *, memory_id: str | None = None, **kw: Any) -> UnitIn:
        """One version of a memory entry; versions of one entry share ``memory_id``."""
        if memory_id:
            kw["memory_id"] = memory_id
        return self.unit("memory", content, **kw)

    def tombstone(self, memory_id: str, **kw: Any) -> UnitIn:
        """What a deletion leaves of a memory entry."""
        return self.unit("tombstone", "", memory_id=memory_id, **kw)

    def query(self, content: str, **kw: Any) -> UnitIn:
        return self.unit("query", content, **kw)

    def context(self, content: str, **kw: Any) -> UnitIn:
        """What retrieval handed to the answering model."""
        return self.unit("context", content, **kw)

    def answer(self, content: str, **kw: Any) -> UnitIn:
        return self.unit("answer", content, **kw)

    def prompt(self, content: str, **kw: Any) -> UnitIn:
        return self.unit("prompt", content, **kw)

    def prompt_version(self, prompt: PromptLike) -> UnitIn:
        """The unit of a prompt template version (``memtrace_client.prompts``), queued once per
        tracer. Not masked: a template is the pipeline's text, not a user's, and its id is the
        hash of exactly that text."""
        unit = as_prompt(prompt).unit()
        if unit.id not in self._prompts_sent:
            self._prompts_sent.add(unit.id)
            self.delivery.put("units", unit.model_dump(mode="json", exclude_defaults=True))
        return unit

    def _with_prompt(self, op: Operation, prompt: PromptLike | None) -> None:
        """An operation that ran with a template consumes its version (its first input) and
        names it in ``attributes.prompt``, which reports group failures by."""
        if prompt is not None:
            unit = self.prompt_version(prompt)
            op.inputs.insert(0, unit.id)
            op.set(prompt=unit.id)

    # -- operations ------------------------------------------------------------------------------

    @contextmanager
    def operation(
        self,
        name: str,
        *,
        kind: OperationKind,
        inputs: Iterable[UnitLike] = (),
        id: str | None = None,
        system: str | None = None,
        session_id: str | None = None,
        prompt: PromptLike | None = None,
        **attributes: Any,
    ) -> Iterator[Operation]:
        """Record one operation around a block; ``op.output(...)`` what it produces.
        ``prompt`` is the template it runs with (a ``Prompt`` or ``(name, text)``)."""
        op = Operation(name, kind, id=id or self._new_id("op"), ts=_now())
        op.input(*inputs)
        op.set(**attributes)
        self._with_prompt(op, prompt)
        token = _current.set(op)
        started = time.perf_counter()
        try:
            yield op
        except BaseException as e:
            op.set(error=type(e).__name__)
            raise
        finally:
            _current.reset(token)
            op.attributes.setdefault("duration_ms", round((time.perf_counter() - started) * 1e3, 3))
            self._record(op, system, session_id)

    def record_operation(
        self,
        name: str,
        *,
        kind: OperationKind,
        inputs: Iterable[UnitLike] = (),
        outputs: Iterable[UnitLike] = (),
        id: str | None = None,
        ts: datetime | None = None,
        system: str | None = None,
        session_id: str | None = None,
        prompt: PromptLike | None = None,
        **attributes: Any,
    ) -> str:
        """Record an operation that already happened (adapters reading a system's own log)."""
        op = Operation(name, kind, id=id or self._new_id("op"), ts=ts or _now())
        op.input(*inputs)
        op.output(*outputs)
        op.set(**attributes)
        self._with_prompt(op, prompt)
        self._record(op, system, session_id)
        return op.id

    def _record(self, op: Operation, system: str | None, session_id: str | None) -> None:
        model = OperationIn(
            id=op.id,
            name=op.name,
            kind=op.kind,
            system=system or self.system,
            session_id=session_id or self.session_id,
            ts=op.ts,
            inputs=op.inputs,
            outputs=op.outputs,
            attributes={**self._tags, **op.attributes},
        )
        self.delivery.put("operations", model.model_dump(mode="json", exclude_defaults=True))

    def traced(
        self,
        name: str | None = None,
        *,
        kind: OperationKind,
        prompt: PromptLike | None = None,
        **attributes: Any,
    ) -> Callable[[Callable[P, R]], Callable[P, R]]:
        """Decorator form of ``operation``: units among the arguments (or in lists of them) are
        the inputs, a unit returned (or a list of units) the outputs. A function that returns
        plain text instead (a ``str``, or a list or tuple of them) gets one unit per text, of
        the kind its operation produces (``RETURNED_KIND``: a retrieval's texts are contexts, a
        response's an answer, ...), so its output is never silently lost. Inside, ``current()``
        is the operation, to add more. Works on plain and ``async`` functions."""

        def decorate(fn: Callable[P, R]) -> Callable[P, R]:
            op_name = name or fn.__qualname__

            def inputs_of(args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[UnitIn]:
                return list(_units_in([*args, *kwargs.values()]))

            if inspect.iscoroutinefunction(fn):

                @functools.wraps(fn)
                async def run_async(*args: P.args, **kwargs: P.kwargs) -> Any:
                    with self.operation(
                        op_name,
                        kind=kind,
                        inputs=inputs_of(args, kwargs),
                        prompt=prompt,
                        **attributes,
                    ) as op:
                        result = await fn(*args, **kwargs)
                        op.output(*self._returned_units(result, kind))
                        return result

                return run_async  # type: ignore[return-value]

            @functools.wraps(fn)
            def run(*args: P.args, **kwargs: P.kwargs) -> R:
                with self.operation(
                    op_name, kind=kind, inputs=inputs_of(args, kwargs), prompt=prompt, **attributes
                ) as op:
                    result = fn(*args, **kwargs)
                    op.output(*self._returned_units(result, kind))
                    return result

            return run

        return decorate

    def _returned_units(self, result: Any, kind: OperationKind) -> list[UnitIn]:
        units = list(_units_in([result]))
        if units:
            return units
        texts = [result] if isinstance(result, str) else result
        if isinstance(texts, (list, tuple)) and texts and all(isinstance(t, str) for t in texts):
            return [self.unit(RETURNED_KIND.get(kind, "other"), text) for text in texts]
        return []

    @staticmethod
    def current() -> Operation | None:
        """The operation whose block or decorated function is running, if any."""
        return _current.get()

    # -- cases -----------------------------------------------------------------------------------

    def case(
        self,
        question: str,
        expected_answer: str,
        answer_unit: UnitLike | None = LAST_ANSWER,
        verdict: Verdict = "unknown",
        *,
        id: str | None = None,
        evidence_units: Iterable[UnitLike] = (),
        **attributes: Any,
    ) -> CaseRef:
        """Record a question, the answer the system gave (its unit; by default the last answer
        this tracer recorded in this thread or task) and whether it was right. A ``failed``
        case is what ``POST /attribute/{case_id}`` explains. Returns the case id, with
        ``.verdict(...)`` to record the verdict later (``verdict``)."""
        if answer_unit is LAST_ANSWER:  # the default itself, not a unit id equal to it
            answer_unit = self._last_answer.get()
            if answer_unit is None:
                raise ValueError("no answer recorded in this thread or task: pass answer_unit")
        case = CaseIn(
            id=id or self._new_id("case"),
            question=self.mask(question),
            expected_answer=self.mask(expected_answer),
            answer_unit=None if answer_unit is None else _unit_id(answer_unit),
            verdict=verdict,
            evidence_units=[_unit_id(u) for u in evidence_units],
            attributes=attributes,
        )
        self.delivery.put("cases", case.model_dump(mode="json", exclude_defaults=True))
        return CaseRef(case.id, self)

    def verdict(
        self,
        case_id: str,
        verdict: Verdict,
        *,
        expected_answer: str | None = None,
        note: str | None = None,
        timeout_s: float = VERDICT_TIMEOUT_S,
    ) -> dict[str, Any]:
        """Record later whether a case's answer was right (user feedback, an evaluation run
        afterwards), by the case's id alone; the case as stored. Unlike recording, this waits:
        what was recorded before is flushed first (the case must be stored before its verdict
        can be), and a refusal raises ``RejectedRequest`` (404: no such case) here, where it
        can be handled. The same verdict sent again changes nothing.

        The wait is bounded by ``timeout_s`` in all (``VERDICT_TIMEOUT_S``): a verdict usually
        comes from a request handler (a user's thumbs down), which must not hang while the
        service is down. It is not queued like the other records because its refusal is only
        useful here, synchronously; when the time runs out (the case not delivered yet, or the
        service not answering) it raises ``ServiceUnavailable`` and nothing was recorded: send
        it again later."""
        model = VerdictIn(
            verdict=verdict,
            expected_answer=None if expected_answer is None else self.mask(expected_answer),
            note=None if note is None else self.mask(note),
        )
        deadline = time.monotonic() + timeout_s
        if not self.flush(timeout_s).settled:
            raise ServiceUnavailable(
                f"verdict on {case_id!r} not recorded: what was recorded before it is not "
                f"delivered after {timeout_s:g} s (is the service at {self.client.base_url} "
                "down?); send it again later"
            )
        left = max(deadline - time.monotonic(), 0.0)
        return self.client.send_verdict(case_id, model, timeout_s=left)

    # -- lifecycle -------------------------------------------------------------------------------

    def flush(self, timeout_s: float | None = 30.0) -> FlushResult:
        """Send everything recorded so far; true once it is all stored in MemTrace. Otherwise
        the result says whether records are still waiting (``settled``) and which the service
        refused since the previous flush (``rejected``, each with the service's reason)."""
        return self.delivery.flush(timeout_s)

    def close(self, timeout_s: float = 5.0) -> FlushResult:
        """Flush and stop (also done at interpreter exit); unsent batches stay in the spool."""
        return self.delivery.close(timeout_s)


def _units_in(values: Iterable[Any]) -> Iterator[UnitIn]:
    for value in values:
        if isinstance(value, UnitIn):
            yield value
        elif isinstance(value, list | tuple):
            yield from (v for v in value if isinstance(v, UnitIn))
