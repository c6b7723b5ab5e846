"""What the memory adapters share: the searches waiting for an answer, ``answer`` and ``judge``
over them, the digest that names a unit by its text, and the version of the wrapped package.

An adapter that records retrievals (``langgraph.TracedStore``, ``graphiti.TracedGraphiti``)
mixes in :class:`AnswersRetrievals`, hands each retrieval's query and context units to
``self._pending.add``, and gets ``take_retrievals``, ``answer`` and ``judge`` from it.
"""

from __future__ import annotations

import contextvars
import hashlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from importlib import metadata
from typing import Any, ClassVar

from memtrace_client.adapters.judging import decided_verdict
from memtrace_client.models import UnitIn, Verdict
from memtrace_client.prompts import PromptLike
from memtrace_client.tracer import Tracer, UnitLike


def digest(text: str) -> str:
    """A short stable hash of a text: the part of a unit id that names a version by its content,
    so that every process names one text alike."""
    return hashlib.sha1(text.encode()).hexdigest()[:16]


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
    """The retrievals waiting for an answer, per context (each asyncio task, each thread): a
    ``ContextVar`` holding a tuple that is replaced, never changed, so two tasks sharing one
    adapter each see their own, and a task sees its parent's made before it started."""

    def __init__(self, name: str) -> None:
        self._var: contextvars.ContextVar[tuple[Retrieval, ...]] = contextvars.ContextVar(
            name, default=()
        )

    def add(self, query: UnitIn, context: UnitIn) -> None:
        self._var.set((*self._var.get(), Retrieval(query, context)))

    def take(self) -> list[Retrieval]:
        """This context's retrievals since its last ``take`` (and forget them)."""
        taken = self._var.get()
        self._var.set(())
        return list(taken)


class AnswersRetrievals:
    """``answer`` and ``judge`` over an adapter's retrievals; the adapter sets ``tracer`` and
    ``_pending`` and names its ``system``."""

    system: ClassVar[str]
    tracer: Tracer
    _pending: PendingRetrievals

    def take_retrievals(self) -> list[Retrieval]:
        """The retrievals recorded in this context (this task, this thread) since its last
        ``answer`` (and forget them)."""
        return self._pending.take()

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
        Retrievals waiting for an answer are kept per context: two tasks sharing the adapter
        each answer from their own; retrievals run in tasks of their own (``asyncio.gather``)
        are theirs: take them there (``take_retrievals()``) and pass them to ``retrievals=``."""
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
