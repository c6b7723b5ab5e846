"""The edit request of a prompt optimisation and the checks its answer passes before it is stored.

The edit request is a system message (``EDIT_SYSTEM``) and a user message of four labelled parts:

    Prompt name: <name>
    Placeholders to keep: <JSON array of the placeholders, or (none)>
    Edit instructions:
    <one instruction per line>
    Current template:
    <the template, verbatim>

The answer (the proposal) is refused, with a message saying why and nothing stored, when it was
cut at the output limit, is empty, echoes the request, drops a placeholder, or is unchanged
(:func:`check_proposal`).
"""

from __future__ import annotations

import json
import re

from openai.types.chat import ChatCompletionMessageParam

from graph_schema.prompts import placeholders
from service.errors import InvalidInput

NAME_LABEL = "Prompt name:"
PLACEHOLDERS_LABEL = "Placeholders to keep:"
INSTRUCTIONS_LABEL = "Edit instructions:"
TEMPLATE_LABEL = "Current template:"

EDIT_SYSTEM = """\
You edit a prompt template of an LLM memory system, applying edit instructions. Keep the \
template's purpose and the output format it asks for. Keep every placeholder exactly as it is \
written (they are listed). Answer with the complete new template only: no commentary, no code \
fence."""

_SENTENCE_END = re.compile(r"(?<=\.)\s+")
_SPACES = re.compile(r"\s+")


def _placeholders_line(old: str) -> str:
    slots = placeholders(old)
    return f"{PLACEHOLDERS_LABEL} {json.dumps(slots, ensure_ascii=False) if slots else '(none)'}"


def edit_messages(name: str, old: str, instructions: list[str]) -> list[ChatCompletionMessageParam]:
    """The edit request: apply ``instructions`` to template ``old`` of prompt ``name``."""
    lines = [
        f"{NAME_LABEL} {name}",
        _placeholders_line(old),
        INSTRUCTIONS_LABEL,
        *instructions,
        TEMPLATE_LABEL,
        old,
    ]
    return [
        {"role": "system", "content": EDIT_SYSTEM},
        {"role": "user", "content": "\n".join(lines)},
    ]


def edit_tokens(old: str) -> int:
    """The edit's output cap (sent as ``max_tokens``): room for the template to grow by half,
    and some."""
    return len(old) // 2 + 400


def _flat(text: str) -> str:
    return _SPACES.sub(" ", text).strip()


def request_framing(name: str, old: str) -> list[str]:
    """The pieces of the edit request that are ours, not the template's: every sentence of
    ``EDIT_SYSTEM`` and the four label lines as sent (``Prompt name: <name>``, the
    placeholders line with its JSON array, ``Edit instructions:``, ``Current template:``)."""
    sentences = _SENTENCE_END.split(_flat(EDIT_SYSTEM))
    labels = [f"{NAME_LABEL} {name}", _placeholders_line(old), INSTRUCTIONS_LABEL, TEMPLATE_LABEL]
    return [*sentences, *labels]


def echoed_framing(name: str, old: str, new: str) -> str | None:
    """The first piece of :func:`request_framing` that ``new`` contains and ``old`` does not,
    compared verbatim (case kept) once every run of whitespace is one space; None if none.

    Why this test: a model that cannot do the edit (a small local one, say) copies its input.
    The copy keeps every placeholder, since the request lists them, and differs from the old
    template, so the other checks pass and it would be stored as the next version, to be run
    by the user's system with our instructions inside their prompt. The framing addresses the
    model and has no place in any template, so finding it is evidence of an echo rather than
    a judgment of the edit's quality; a template that itself holds such a piece is not
    refused for it. The edit instructions are not framing: applying one may rightly copy its
    sentence into the template word for word. An echo of the instructions and the template
    alone is therefore not caught, and is not told apart from a faithful edit.
    """
    flat_new, flat_old = _flat(new), _flat(old)
    return next(
        (p for p in request_framing(name, old) if p in flat_new and p not in flat_old), None
    )


def check_proposal(name: str, old: str, new: str, finish_reason: str | None, cap: int) -> None:
    """Refuse (``InvalidInput``, nothing stored) a proposal cut at the output limit (``cap``
    tokens), an empty or unchanged one, one that echoes the edit request
    (:func:`echoed_framing`) or one that drops a placeholder of ``old``."""
    if finish_reason == "length":
        # A cut template lost its end (often the output format it asks for); whatever the
        # rest of it looks like, it is not the edit the model meant.
        raise InvalidInput(
            f"the LLM's proposal was cut at its output limit (finish_reason length, at most "
            f"{cap} tokens asked): refused, nothing stored; the model did not finish the "
            "template (a server-side output cap below that, or a model that runs on, does this)",
            details=[{"loc": ["proposal", "finish_reason"], "msg": "length"}],
        )
    loc = ["proposal", "text"]
    if not new.strip():
        raise InvalidInput(
            "the LLM proposed an empty prompt: refused, nothing stored",
            details=[{"loc": loc, "msg": "empty"}],
        )
    echoed = echoed_framing(name, old, new)
    if echoed is not None:
        raise InvalidInput(
            f"the LLM's proposal echoes the edit request (it contains {echoed!r}, which is the "
            "request's own text, not a template's): refused, nothing stored; the model copied "
            "its input instead of editing the template",
            details=[{"loc": loc, "msg": f"echoes the request: {echoed}"}],
        )
    missing = [p for p in placeholders(old) if p not in new]
    if missing:
        raise InvalidInput(
            f"the proposed prompt drops placeholders {', '.join(missing)}: refused, nothing stored",
            details=[{"loc": loc, "msg": f"placeholder {p} missing"} for p in missing],
        )
    if new.strip() == old.strip():
        raise InvalidInput(
            "the LLM proposed the prompt unchanged: nothing stored",
            details=[{"loc": loc, "msg": "unchanged"}],
        )
