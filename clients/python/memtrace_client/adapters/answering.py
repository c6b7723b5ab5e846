"""What the memory adapters share: the searches waiting for an answer, ``answer`` and ``judge``
over them, the digest that names a unit by its text, and the version of the wrapped package.

An adapter that records retrievals (``langgraph.TracedStore``, ``graphiti.TracedGraphiti``)
mixes in :class:`AnswersRetrievals`, hands each retrieval's query and context units to
``self._pending.add``, and gets ``take_retrievals``, ``answer`` and ``judge`` from it.
"""

from __future__ import annotations

import contextvars
import hashlib
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from importlib import metadata
from typing import Any, ClassVar

from memtrace_client.adapters.judging import decided_verdict
from memtrace_client.client import MemTraceClient
from memtrace_client.models import UnitIn, Verdict
from memtrace_client.prompts import PromptLike
from memtrace_client.tracer import Tracer, UnitLike


def digest(text: str) -> str:
    """A short stable hash of a text: the part of a unit id that names a version by its content,
    so that every process names one text alike."""
    return hashlib.sha1(text.encode()).hexdigest()[:16]


def as_tracer(client: MemTraceClient | Tracer, spool_dir: str | None) -> Tracer:
    """The tracer an adapter records with: the one given, or a new one on ``client``."""
    return client if isinstance(client, Tracer) else Tracer(client, spool_dir=spool_dir)


def package_version(distribution: str) -> str:
    """The installed version of a package (its distribution name), or ``unknown``."""
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "unknown"


@dataclass(frozen=True)
class Retrieval:
    """One recorded retrieval (a search, a get): its query unit and the context it produced."""

    query: UnitIn
    context: UnitIn


class PendingRetrievals:
    """The retrievals waiting for an answer: the adapter's own list, or, inside an
    :meth:`answering` block, the block's.

    Why both: a graph's nodes run in contexts of their own (LangGraph copies the context into
    each node's thread or task), so a search in a ``retrieve`` node and the answer in a
    ``generate`` node only meet in a list both can reach, the adapter's. Two tasks that share one
    adapter and answer different questions at once would take each other's searches from it, so
    each opens ``with adapter.answering():`` around its work: the block's list is set in a
    ``ContextVar``, and every context copied from inside the block (the nodes of a graph invoked
    there, tasks it starts) shares that one list object.
    """

    def __init__(self, name: str) -> None:
        self._shared: list[Retrieval] = []
        self._block: contextvars.ContextVar[list[Retrieval] | None] = contextvars.ContextVar(
            name, default=None
        )
        self._lock = threading.Lock()  # nodes in threads append and take at once

    def _list(self) -> list[Retrieval]:
        block = self._block.get()
        return self._shared if block is None else block

    def add(self, query: UnitIn, context: UnitIn) -> None:
        with self._lock:
            self._list().append(Retrieval(query, context))

    def take(self) -> list[Retrieval]:
        """The retrievals since the last ``take`` (and forget them)."""
        with self._lock:
            pending = self._list()
            taken = list(pending)
            pending.clear()
        return taken

    @contextmanager
    def block(self) -> Iterator[None]:
        token = self._block.set([])
        try:
            yield
        finally:
            self._block.reset(token)


class AnswersRetrievals:
    """``answer`` and ``judge`` over an adapter's retrievals; the adapter sets ``tracer`` and
    ``_pending`` and names its ``system``."""

    system: ClassVar[str]
    tracer: Tracer
    _pending: PendingRetrievals

    def take_retrievals(self) -> list[Retrieval]:
        """The retrievals recorded since the last ``answer`` (in this ``answering`` block, if
        one is open), and forget them."""
        return self._pending.take()

    def answering(self) -> AbstractContextManager[None]:
        """``with adapter.answering():`` around one question's searches and answer, when several
        questions are asked at once on one adapter (asyncio tasks, threads): each block's answer
        reads the searches made in it, including in the graph nodes and tasks it starts. Outside
        any block the adapter keeps one list, which a graph's separate retrieve and answer nodes
        both reach."""
        return self._pending.block()

    def answer(
        self,
        answer: str | Callable[[str], str],
        *,
        retrievals: Iterable[Retrieval] | None = None,
        name: str = "answer",
        prompt: PromptLike | None = None,
        **attributes: Any,
    ) -> UnitIn:
        """Record the answering step over ``retrievals`` (by default those since the last answer
        in this context). ``answer`` is the text, or a function from the contexts' text to it
        (your LLM call); ``prompt`` the template that call used. Returns the answer unit.
        Questions asked at once on one adapter each take theirs in an :meth:`answering`
        block."""
        used = list(retrievals) if retrievals is not None else self.take_retrievals()
        inputs = [u for r in used for u in (r.query, r.context)]
        with self.tracer.operation(
            name, kind="response", inputs=inputs, system=self.system, prompt=prompt, **attributes
        ) as op:
            context = "\n".join(r.context.content for r in used)
            unit = self.tracer.answer(answer(context) if callable(answer) else answer)
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
        evidence: Iterable[UnitLike] = (),
        **attributes: Any,
    ) -> str:
        """Record the case: the verdict given, or decided by ``judge(question, expected,
        answer)``, or by whether the expected answer's words all appear in the answer.
        ``evidence``: the messages that held the answer, when known. Returns the case id."""
        return self.tracer.case(
            question,
            expected_answer,
            answer_unit,
            decided_verdict(question, expected_answer, answer_unit.content, verdict, judge),
            evidence_units=evidence,
            system=self.system,
            **attributes,
        )
