"""Assemble a ``TraceBatch``-shaped dict with neutral ids and a monotonic clock.

Ids are ``u-<tag>-NNNNNN``, ``op-<tag>-NNNNNN`` and ``case-<tag>-NNNNNN``: the counter says nothing
about a unit's role, and the tag (a hash of the batch's identity) keeps ids of different batches
apart when they are ingested into one project. Execution order is what "earliest faulty operation"
refers to, so every operation gets a strictly later timestamp than the one before it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any


def batch_tag(*parts: object) -> str:
    """Six hex digits identifying a batch; stable across runs (no ``hash()``)."""
    text = "|".join(str(p) for p in parts)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:6]


class BatchBuilder:
    """Collects units, operations and cases in creation order.

    Units created before an operation share that operation's timestamp; ``op`` then advances the
    clock, so operations are strictly ordered in time as they are in execution.
    """

    def __init__(
        self, project: str, tag: str, start: datetime, stamp: dict[str, Any] | None = None
    ) -> None:
        self.project = project
        self._stamp = dict(stamp or {})  # attributes every operation carries (its scope, say)
        self._tag = tag
        self._now = start if start.tzinfo else start.replace(tzinfo=UTC)
        self._counters = {"u": 0, "op": 0, "case": 0}
        self._units: list[dict[str, Any]] = []
        self._operations: list[dict[str, Any]] = []
        self._cases: list[dict[str, Any]] = []
        self.content: dict[str, str] = {}
        """Content of every unit by id, for generators that need to look back."""

    def _next_id(self, prefix: str) -> str:
        self._counters[prefix] += 1
        return f"{prefix}-{self._tag}-{self._counters[prefix]:06d}"

    @property
    def now(self) -> datetime:
        return self._now

    def advance(self, seconds: float = 1.0) -> None:
        self._now += timedelta(seconds=seconds)

    def jump_to(self, when: datetime) -> None:
        """Move the clock forward to ``when`` (never backwards)."""
        when = when if when.tzinfo else when.replace(tzinfo=UTC)
        self._now = max(self._now, when)

    def unit(self, kind: str, content: str, **attributes: Any) -> str:
        unit_id = self._next_id("u")
        self._units.append(
            {
                "id": unit_id,
                "kind": kind,
                "content": content,
                "ts": self._now.isoformat(),
                "attributes": attributes,
            }
        )
        self.content[unit_id] = content
        return unit_id

    def op(
        self,
        name: str,
        kind: str,
        system: str,
        inputs: Sequence[str],
        outputs: Sequence[str],
        *,
        session_id: str | None = None,
        **attributes: Any,
    ) -> str:
        op_id = self._next_id("op")
        self._operations.append(
            {
                "id": op_id,
                "name": name,
                "kind": kind,
                "system": system,
                "session_id": session_id,
                "ts": self._now.isoformat(),
                "inputs": list(inputs),
                "outputs": list(outputs),
                "attributes": {**self._stamp, **attributes},
            }
        )
        self.advance()
        return op_id

    def case(
        self,
        question: str,
        expected_answer: str,
        answer_unit: str,
        *,
        passed: bool,
        evidence_units: Sequence[str] = (),
        **attributes: Any,
    ) -> str:
        case_id = self._next_id("case")
        self._cases.append(
            {
                "id": case_id,
                "question": question,
                "expected_answer": expected_answer,
                "answer_unit": answer_unit,
                "verdict": "passed" if passed else "failed",
                "evidence_units": list(evidence_units),
                "attributes": attributes,
            }
        )
        return case_id

    def build(self) -> dict[str, Any]:
        return {
            "project": self.project,
            "units": self._units,
            "operations": self._operations,
            "cases": self._cases,
        }
