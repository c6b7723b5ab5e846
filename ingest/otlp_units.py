"""Units made from span attributes: messages, memory records, queries; and how their ids are made.

Units are immutable (the server answers 409 when an id comes back with other content), so an id
is either tied to one span (``<operation id>/<role>/<n>``: a query, a retrieved context, an
answer; a span is sent once) or derived from everything the unit holds:

- a message a model read: ``message:<hash of kind, content, role>``, so the same turn read by
  several LLM calls is one source message;
- system instructions (``gen_ai.system_instructions``, a system or developer message): a prompt
  version, ``prompt:<name>@<hash of text>`` (``memtrace_client.prompts``), named by the span's
  ``memtrace.prompt.name`` attribute, else ``<span name>.system`` made path-safe;
- a memory record version: ``memory:<store>:<record>@<hash of content>``, with
  ``attributes.memory_id = "<store>:<record>"`` shared by every version of the record (that is
  how the attribution follows an entry through updates);
- a deleted record: ``tombstone:<store>:<record>``, empty content, the same ``memory_id``.

Message formats read: the GenAI conventions' ``gen_ai.input.messages`` /
``gen_ai.output.messages`` (a JSON string or an array of ``{role, parts: [{type, content}]}``;
``{role, content}`` works too) and ``gen_ai.system_instructions``; the older ``gen_ai.prompt`` /
``gen_ai.completion`` (a string, a JSON list of messages, or OpenLLMetry's indexed
``gen_ai.prompt.<i>.role`` / ``gen_ai.prompt.<i>.content``). A part that is not text (a tool
call, say) is kept as its canonical JSON.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any

from graph_schema.prompts import Prompt
from ingest.ids import bounded_id

Unit = dict[str, Any]
PROMPT_ROLES = frozenset({"system", "developer"})
PROMPT_NAME_ATTRIBUTE = "memtrace.prompt.name"


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def digest(*parts: Any) -> str:
    return hashlib.blake2b(canonical(parts).encode(), digest_size=10).hexdigest()


def text_of(value: Any) -> str:
    """Content as text: a string as is, anything else as canonical JSON."""
    return value if isinstance(value, str) else canonical(value)


def json_list(value: Any) -> list[Any] | None:
    """An attribute that should hold a list: an array attribute, or a JSON string of one."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            return None
    if isinstance(value, dict):
        return [value]
    return value if isinstance(value, list) else None


def unit(unit_id: str, kind: str, content: str, attributes: dict[str, Any] | None = None) -> Unit:
    return {
        "id": bounded_id(unit_id),
        "kind": kind,
        "content": content,
        "attributes": attributes or {},
    }


# Messages.


@dataclass(frozen=True)
class Message:
    role: str
    text: str


def prompt_name(span_name: str, attributes: dict[str, Any]) -> str:
    """The prompt name system instructions are a version of (see the module docstring)."""
    given = attributes.get(PROMPT_NAME_ATTRIBUTE)
    name = given if isinstance(given, str) and given else f"{span_name or 'span'}.system"
    return re.sub(r"[^A-Za-z0-9_.\-]", "_", name)[:128]


def message_unit(message: Message, prompt: str) -> Unit:
    """A message a model read, shared by every span that read the same one; system
    instructions are a version of the prompt named ``prompt``."""
    if message.role in PROMPT_ROLES:
        version = Prompt(prompt, message.text).unit().model_dump(mode="json")
        version["attributes"]["role"] = message.role
        return unit(version["id"], "prompt", message.text, version["attributes"])
    attributes = {"role": message.role}
    return unit(
        f"message:{digest('message', message.text, attributes)}",
        "message",
        message.text,
        attributes,
    )


def input_messages(attributes: dict[str, Any]) -> list[Message]:
    """What an LLM span read: system instructions first, then its input messages."""
    found: list[Message] = []
    instructions = attributes.get("gen_ai.system_instructions")
    if instructions is not None:
        parts = json_list(instructions)
        text = _parts_text(parts) if parts is not None else text_of(instructions)
        found.append(Message("system", text))
    return found + _messages(attributes, "gen_ai.input.messages", "gen_ai.prompt", "user")


def output_messages(attributes: dict[str, Any]) -> list[Message]:
    """What an LLM span wrote."""
    return _messages(attributes, "gen_ai.output.messages", "gen_ai.completion", "assistant")


def _messages(attributes: dict[str, Any], key: str, legacy: str, role: str) -> list[Message]:
    for name in (key, legacy):
        value = attributes.get(name)
        if value is None:
            continue
        items = json_list(value)
        if items is None:  # a plain string: one message
            return [Message(role, text_of(value))]
        return [_message(item, role) for item in items]
    return _indexed_messages(attributes, legacy, role)


def _message(item: Any, default_role: str) -> Message:
    if not isinstance(item, dict):
        return Message(default_role, text_of(item))
    role = str(item.get("role") or default_role)
    if isinstance(item.get("parts"), list):
        return Message(role, _parts_text(item["parts"]))
    content = item.get("content")
    if isinstance(content, list):
        return Message(role, _parts_text(content))
    return Message(role, text_of(content) if content is not None else canonical(item))


def _parts_text(parts: list[Any]) -> str:
    texts = []
    for part in parts:
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, dict) and part.get("type", "text") == "text":
            text = part.get("content", part.get("text"))
            texts.append(text_of(text) if text is not None else canonical(part))
        else:
            texts.append(canonical(part))
    return "\n".join(texts)


_INDEXED = re.compile(r"^(\d+)\.(role|content)$")


def _indexed_messages(attributes: dict[str, Any], prefix: str, role: str) -> list[Message]:
    """OpenLLMetry's flattened form: ``gen_ai.prompt.0.role``, ``gen_ai.prompt.0.content``."""
    by_index: dict[int, dict[str, Any]] = {}
    for name, value in attributes.items():
        if name.startswith(prefix + ".") and (m := _INDEXED.match(name[len(prefix) + 1 :])):
            by_index.setdefault(int(m[1]), {})[m[2]] = value
    return [
        Message(str(fields.get("role") or role), text_of(fields.get("content", "")))
        for _, fields in sorted(by_index.items())
        if "content" in fields
    ]


# Memory records.


@dataclass(frozen=True)
class Record:
    record_id: str | None
    content: str | None
    score: Any = None


def records(value: Any) -> list[Record] | None:
    """``gen_ai.memory.records`` (``[{id?, content, metadata?, score?}]``); None if unreadable."""
    items = json_list(value)
    if items is None:
        return None
    found = []
    for item in items:
        if isinstance(item, dict):
            rid = item.get("id")
            content = item.get("content")
            found.append(
                Record(
                    None if rid is None else str(rid),
                    None if content is None else text_of(content),
                    item.get("score"),
                )
            )
        else:
            found.append(Record(None, text_of(item)))
    return found


def memory_id(store: str | None, record_id: str) -> str:
    """The memory entry of a record: indexed, so bounded like an id (``bounded_id``)."""
    return bounded_id(f"{store or '-'}:{record_id}")


def memory_version(store: str | None, record_id: str, content: str) -> Unit:
    """One version of a memory record: same content, same id, wherever it is seen."""
    entry = memory_id(store, record_id)
    return unit(
        f"memory:{entry}@{digest(content)}",
        "memory",
        content,
        {"memory_id": entry, "store_id": store, "record_id": record_id},
    )


def tombstone(store: str | None, record_id: str) -> Unit:
    entry = memory_id(store, record_id)
    return unit(
        f"tombstone:{entry}",
        "tombstone",
        "",
        {"memory_id": entry, "store_id": store, "record_id": record_id},
    )
