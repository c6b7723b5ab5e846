"""The adapters' default verdict, for callers that give neither a verdict nor a judge."""

from __future__ import annotations

import re

_WORD = re.compile(r"[a-z0-9]+")


def contains_expected(question: str, expected: str, answer: str) -> bool:
    """Passed when every word of the expected answer appears in the answer (case-insensitive).
    Crude on purpose: a paraphrase fails it; pass an LLM judge for those."""
    words = set(_WORD.findall(expected.lower()))
    return bool(words) and words <= set(_WORD.findall(answer.lower()))
