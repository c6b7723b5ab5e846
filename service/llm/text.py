"""What every caller of the chat client estimates and reads of its text: the token estimate
its budgets are checked against, and an answer without the Markdown fence or the sentence a
model may put around what it was asked for."""

from __future__ import annotations

import json
from typing import Any

from openai.types.chat import ChatCompletionMessageParam

CHARS_PER_TOKEN = 3
"""On the high side of real tokenisers (JSON-quoted text tokenises worse than prose), so a
budget checked against the estimate holds when the endpoint reports no usage."""
MESSAGE_OVERHEAD_TOKENS = 8
"""The roles and separators a chat template adds around the messages."""

_DECODER = json.JSONDecoder()


def estimate_tokens(messages: list[ChatCompletionMessageParam]) -> int:
    """Tokens the endpoint will count for ``messages``, estimated before sending them."""
    chars = sum(len(str(m.get("content") or "")) for m in messages)
    return chars // CHARS_PER_TOKEN + MESSAGE_OVERHEAD_TOKENS


def strip_fence(text: str) -> str:
    """``text`` without a Markdown code fence around it (asked for none; some models add one)."""
    stripped = text.strip()
    if stripped.startswith("```"):
        stripped = stripped.split("\n", 1)[1] if "\n" in stripped else ""
        stripped = stripped.removesuffix("```").strip()
    return stripped


def first_json_object(text: str) -> dict[str, Any] | None:
    """The answer's JSON object: the whole text (once unfenced), else the first ``{...}`` that
    parses whole, wherever it starts (a model asked for JSON may wrap it in a sentence). None
    when there is none."""
    try:
        value = json.loads(strip_fence(text))
    except ValueError:
        value = None
    if isinstance(value, dict):
        return value
    start = text.find("{")
    while start != -1:
        try:
            found, _ = _DECODER.raw_decode(text, start)
        except ValueError:
            found = None
        if isinstance(found, dict):
            return found
        start = text.find("{", start + 1)
    return None
