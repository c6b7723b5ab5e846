"""The Agents SDK's items as text, and the unit ids both halves of the adapter name them by.

A session stores Responses API input items (``{"role", "content"}`` messages, ``function_call``
and ``function_call_output`` items, ...); a model call reads and writes the same items (the
Responses API) or chat messages (``OpenAIChatCompletionsModel``). Each becomes a *key*, its role
and its text, the same for one item in either form: a message is its role and its text, a tool
call ``tool_call`` and ``name(arguments)``, a tool result ``tool_output`` and its text. The
session and the tracing processor meet on these keys (``AgentsLineage``).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator, Mapping
from typing import Any

SYSTEM = "openai-agents"
"""The operations' ``system`` unless the tracer names one."""

Key = tuple[str, str]
"""An item's role (``user``, ``assistant``, ``tool_call``, ``tool_output``, ...) and its text."""

PROMPT_ROLES = ("system", "developer")


def digest(*parts: str) -> str:
    """A short stable hash naming a unit by its text."""
    return hashlib.sha1("\x1f".join(parts).encode()).hexdigest()[:16]


def content_text(content: Any) -> str:
    """A content as text: a string, or the text of its parts (``input_text``, ``output_text``)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = (p.get("text") if isinstance(p, Mapping) else p for p in content)
        return "\n".join(p for p in parts if isinstance(p, str))
    return "" if content is None else str(content)


def item_key(item: Any) -> Key:
    """The key of one session or Responses API item (a mapping, or a model of one)."""
    if hasattr(item, "model_dump"):
        item = item.model_dump(mode="json", exclude_none=True)
    if not isinstance(item, Mapping):
        return "item", str(item)
    kind = item.get("type", "message")
    if kind == "function_call":
        return "tool_call", f"{item.get('name')}({item.get('arguments')})"
    if kind == "function_call_output":
        return "tool_output", content_text(item.get("output"))
    if kind == "message" and "role" in item:
        return str(item["role"]), content_text(item.get("content"))
    # Items the adapter has no text rule for (reasoning, web searches, ...): their JSON, without
    # the ids a server assigns, so that one item read back is the one stored.
    rest = {k: v for k, v in item.items() if k not in ("id", "provider_data")}
    return str(kind), json.dumps(rest, sort_keys=True, default=str)


def chat_keys(message: Mapping[str, Any]) -> Iterator[Key]:
    """The keys of one chat completions message (a generation span's input or output)."""
    role = str(message.get("role", "user"))
    if role == "tool":
        yield "tool_output", content_text(message.get("content"))
        return
    text = content_text(message.get("content"))
    if text:
        yield role, text
    for call in message.get("tool_calls") or []:
        function = call.get("function") or {}
        yield "tool_call", f"{function.get('name')}({function.get('arguments')})"


def render(key: Key) -> str:
    """A key as one line of a context: ``role: text``."""
    return f"{key[0]}: {key[1]}"


def message_unit_id(role: str, text: str) -> str:
    """The id of the ``message`` (or, for a system prompt, ``prompt``) unit of a turn's item
    that no traced step produced: the user's input. The session's write and the model call that
    read it name the same unit; give it as a case's evidence."""
    return f"agents:message:{role}:{digest(role, text)}"


def memory_id_of(session_id: str, key: Key) -> str:
    """The ``memory_id`` of an item stored in a session: the session and the item's key."""
    return f"{session_id}#{digest(*key)}"


def prompt_name(agent: str) -> str:
    """The prompt name an agent's instructions are versioned under: ``agents.<agent name>``."""
    return "agents." + (re.sub(r"[^A-Za-z0-9_.-]", "_", agent)[:120] or "agent")
