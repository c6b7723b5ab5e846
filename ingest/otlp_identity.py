"""When two spans mean the same unit: the identity rules of OTLP units (README "Identity").

A unit's id is all that joins spans, traces and exports: two spans naming one id name one node,
whichever export carried them, and ids are immutable (the writer answers 409 when an id comes
back with other content). So an id is either tied to one span or derived from what the unit is:

- a memory record version: its store id, record id and text (``memory:<store>:<record>@<hash>``);
  every version of a record shares ``attributes.memory_id`` (``<store>:<record>``). A write of a
  record consumes the version seen last before it: in its export, else in the store
  (``ingest.otlp_lineage``); a deletion ends the chain, a later write starts a new one;
- a message a model read: its role and text, within its conversation (``session.id`` or
  ``gen_ai.conversation.id``) when the span names one, else within the project (a trace per
  turn names no conversation, and the text is then what joins the turns);
- system instructions: a version of the prompt ``memtrace.prompt.name`` when the span names
  one; else a prompt of their own (``<span name>.system.<hash of the text>``), since two texts
  sent under no name are two prompts, not two versions of one;
- what a span produced for itself (an answer, a query, a retrieved context, a write without a
  record id): ``<operation id>/<role>/<n>``, never shared.

Text is matched exactly and only in these ids: no similarity, no window in time. A retrieved
record without an id is a context of its own; give records ids to join them to their writes.
"""

from __future__ import annotations

from typing import Any

from memtrace_client.prompts import text_hash

from ingest import otlp_units as u
from ingest.ids import bounded_id

MAX_PROMPT_NAME = 128
_HASH = 8


def prompt_name(span_name: str, attributes: dict[str, Any], text: str) -> str:
    """The prompt system instructions ``text`` are a version of (module docstring)."""
    name = u.prompt_name(span_name, attributes)
    given = attributes.get(u.PROMPT_NAME_ATTRIBUTE)
    if isinstance(given, str) and given:
        return name
    return f"{name[: MAX_PROMPT_NAME - _HASH - 1]}.{text_hash(text)[:_HASH]}"


def message_unit(message: u.Message, prompt: str, conversation: str | None) -> u.Unit:
    """The unit of a message a model read: one per conversation (module docstring)."""
    found = u.message_unit(message, prompt)
    if conversation is None or found["kind"] != "message":
        return found
    key = u.digest("message", message.text, found["attributes"], conversation)
    return {**found, "id": bounded_id(f"message:{key}")}
