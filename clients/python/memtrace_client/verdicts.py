"""``CaseRef``: what ``Tracer.case`` returns, to record the verdict later.

A verdict often comes after the answer: a user's thumbs down, an evaluation run the next day.
As with a score attached to a trace later in Langfuse, the case's id is enough; nobody has to
know the id of the unit that holds the answer (the tracer keeps it when the case is made).
"""

from __future__ import annotations

from typing import Any, Protocol

from memtrace_client.models import Verdict

VERDICT_TIMEOUT_S = 5.0
"""How long ``Tracer.verdict`` may wait in all (flush, then the request and its retries)."""


class _Verdicts(Protocol):
    def verdict(
        self,
        case_id: str,
        verdict: Verdict,
        *,
        expected_answer: str | None = None,
        note: str | None = None,
        timeout_s: float = VERDICT_TIMEOUT_S,
    ) -> dict[str, Any]: ...


class CaseRef(str):
    """A recorded case's id (a ``str``: use it wherever an id goes) that can record its verdict:
    ``case.verdict("failed", note="user: wrong city")``."""

    _tracer: _Verdicts

    def __new__(cls, case_id: str, tracer: _Verdicts) -> CaseRef:
        ref = super().__new__(cls, case_id)
        ref._tracer = tracer
        return ref

    def verdict(
        self,
        verdict: Verdict,
        *,
        expected_answer: str | None = None,
        note: str | None = None,
        timeout_s: float = VERDICT_TIMEOUT_S,
    ) -> dict[str, Any]:
        """``Tracer.verdict`` for this case (at most ``timeout_s`` in all)."""
        return self._tracer.verdict(
            str(self), verdict, expected_answer=expected_answer, note=note, timeout_s=timeout_s
        )
