"""The adapters' default verdict, for callers that give neither a verdict nor a judge."""

from __future__ import annotations

import re
from collections.abc import Callable

from memtrace_client.models import Verdict

_WORD = re.compile(r"[a-z0-9]+")


def contains_expected(question: str, expected: str, answer: str) -> bool:
    """Passed when every word of the expected answer appears in the answer (case-insensitive).
    Crude on purpose: a paraphrase fails it; pass an LLM judge for those."""
    words = set(_WORD.findall(expected.lower()))
    return bool(words) and words <= set(_WORD.findall(answer.lower()))


def decided_verdict(
    question: str,
    expected: str,
    answer: str,
    verdict: Verdict | None,
    judge: Callable[[str, str, str], bool] | None = None,
) -> Verdict:
    """The verdict an adapter records: the one given, else ``judge(question, expected, answer)``
    (an LLM judge, say), else :func:`contains_expected`."""
    if verdict is not None:
        return verdict
    return "passed" if (judge or contains_expected)(question, expected, answer) else "failed"
