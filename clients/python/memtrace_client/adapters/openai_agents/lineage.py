"""Where the session and the tracing processor meet: one ``AgentsLineage`` per tracer.

- What the agent produced (a model call's answers and tool calls, a tool's result), by key: a
  later model call of the run that is sent such an item consumes that unit (a tool's result),
  and a session write of it names the unit (``said_by``).
- What each run read back from a session: a session's ``get_items`` runs before the Runner opens
  its trace, so the read is held in a ``ContextVar`` of the run's task and bound to the next
  trace started there (or at once to the trace already open, as in ``with trace(...)`` around
  several runs). Every model call of that trace consumes the read's context.
- The answers, by response id and by text, for ``MemTraceProcessor.answer_of(result)``.

Bounded: at most ``MAX_KEPT`` keys and answers (the newest), and a run's reads are forgotten
when its trace ends.
"""

from __future__ import annotations

import contextvars
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from weakref import WeakKeyDictionary

from memtrace_client.adapters.openai_agents.items import Key
from memtrace_client.tracer import Tracer

MAX_KEPT = 10_000


@dataclass(frozen=True)
class SessionRead:
    """One recorded ``get_items``: its context unit, its session and the keys it returned."""

    context: str
    session_id: str
    keys: frozenset[Key] = field(default_factory=frozenset)


def _put(kept: OrderedDict[str, str] | OrderedDict[Key, str], key: object, value: str) -> None:
    kept.pop(key, None)  # type: ignore[call-overload]
    kept[key] = value  # type: ignore[index]
    while len(kept) > MAX_KEPT:
        kept.popitem(last=False)


class AgentsLineage:
    """The lineage state the adapter's two halves share (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._produced: OrderedDict[Key, str] = OrderedDict()
        self._reads: dict[str, list[SessionRead]] = {}
        self._pending: contextvars.ContextVar[tuple[SessionRead, ...]] = contextvars.ContextVar(
            f"memtrace_agents_reads_{id(self)}", default=()
        )
        self._by_response: OrderedDict[str, str] = OrderedDict()
        self._by_text: OrderedDict[str, str] = OrderedDict()

    # -- what the agent produced -------------------------------------------------------------

    def produced(self, key: Key, unit_id: str) -> None:
        with self._lock:
            _put(self._produced, key, unit_id)

    def producer_of(self, key: Key) -> str | None:
        """The newest unit a traced step produced with this key, if any."""
        with self._lock:
            return self._produced.get(key)

    # -- what a run read back ----------------------------------------------------------------

    def read(self, read: SessionRead, trace_id: str | None) -> None:
        """A session read: bound to ``trace_id`` if a trace is open, else to the next one."""
        if trace_id is None:
            self._pending.set((*self._pending.get(), read))
            return
        with self._lock:
            self._reads.setdefault(trace_id, []).append(read)

    def trace_started(self, trace_id: str) -> None:
        pending = self._pending.get()
        if pending:
            self._pending.set(())
            with self._lock:
                self._reads.setdefault(trace_id, []).extend(pending)

    def reads_of(self, trace_id: str) -> list[SessionRead]:
        with self._lock:
            return list(self._reads.get(trace_id, ()))

    def trace_ended(self, trace_id: str) -> None:
        with self._lock:
            self._reads.pop(trace_id, None)

    # -- answers -----------------------------------------------------------------------------

    def answered(self, unit_id: str, text: str, response_id: str | None) -> None:
        with self._lock:
            _put(self._by_text, text, unit_id)
            if response_id:
                _put(self._by_response, response_id, unit_id)

    def answer_for(self, response_ids: list[str], text: str) -> str | None:
        """The answer unit of the newest of ``response_ids`` known, else the newest answer whose
        text is ``text``."""
        with self._lock:
            for response_id in reversed(response_ids):
                if response_id in self._by_response:
                    return self._by_response[response_id]
            return self._by_text.get(text)


_lineages: WeakKeyDictionary[Tracer, AgentsLineage] = WeakKeyDictionary()
_lock = threading.Lock()


def lineage_of(tracer: Tracer) -> AgentsLineage:
    """The tracer's one ``AgentsLineage`` (made on first use)."""
    with _lock:
        lineage = _lineages.get(tracer)
        if lineage is None:
            lineage = _lineages[tracer] = AgentsLineage()
        return lineage
