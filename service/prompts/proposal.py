"""The edit request of a prompt optimisation and the checks its answer passes before it is stored.

The edit request is a system message (``EDIT_SYSTEM``) and a user message of four labelled parts:

    Prompt name: <name>
    Placeholders to keep: <JSON array of the placeholders, or (none)>
    Edit instructions:
    <one instruction per line>
    Current template:
    <the template, verbatim>

The answer (the proposal) is refused, with a message saying why and nothing stored, when it was
cut at the output limit, is empty, holds the current template more than once, repeats itself,
echoes the request, drops a placeholder, or is unchanged (:func:`check_proposal`).

Repetition and echo are measured on word shingles: the sequences of :data:`SHINGLE_WORDS`
consecutive words of a text, lower-cased, punctuation dropped. Deterministic, and each refusal
says the figure it found and the threshold it crossed:

- *repeats itself*: the share of the proposal's shingles that repeat one earlier in it, beyond
  the repeats the current template has (:func:`added_repetition`): 0 for an edit that adds no
  repeated three-word sequence, 2/3 for a template written out three times. Refused at
  :data:`REPEAT_LIMIT` or more (a template keeps its own repetitions: Mem0's update prompt,
  with its JSON examples, repeats 36% of its shingles);
- *echoes the request*: for each piece of the request that is ours, not the template's (every
  sentence of ``EDIT_SYSTEM`` and the four label lines, :func:`request_framing`), the share of
  its shingles the proposal holds that the current template does not (:func:`echoed_share`);
  one piece at :data:`ECHO_LIMIT` or more refuses it. A piece copied with a word changed, or
  half of it, is caught as the whole one is; a template that itself holds such words is not
  refused for them.
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
_WORD = re.compile(r"\w+")

SHINGLE_WORDS = 3
"""Words per shingle: three tell a copied phrase from words any two texts share ("the
template"), and a label line of two words ("Current template") is one shingle of two."""
REPEAT_LIMIT = 0.3
"""A proposal a third of whose word sequences are repeats the current template does not have is
refused (a template written out three times: 0.67; a model looping on one line: near 1). An
edit adding a sentence or two adds few repeats, whatever the template repeats already."""
ECHO_LIMIT = 0.5
"""Half of one sentence or label of the request found in the proposal (and not in the current
template) refuses it: more than a shared turn of phrase, less than a verbatim copy."""


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


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def shingles(words: list[str], size: int = SHINGLE_WORDS) -> list[tuple[str, ...]]:
    """The runs of ``size`` consecutive ``words``, in order (one run of all of them when there
    are fewer)."""
    size = min(size, len(words))
    if size == 0:
        return []
    return [tuple(words[i : i + size]) for i in range(len(words) - size + 1)]


def _repeats(text: str) -> tuple[int, int]:
    """How many shingles ``text`` has, and how many of them occur earlier in it."""
    runs = shingles(_words(text))
    return len(runs), len(runs) - len(set(runs))


def added_repetition(old: str, new: str) -> float:
    """The share of ``new``'s shingles that repeat one earlier in it, less the repeats ``old``
    has (0 when ``new`` repeats no more than ``old``)."""
    runs, repeats = _repeats(new)
    return max(0, repeats - _repeats(old)[1]) / runs if runs else 0.0


def echoed_share(piece: str, old: str, new: str) -> float:
    """The share of ``piece``'s shingles that ``new`` holds and ``old`` does not (shingles as
    long as the piece when it is shorter than :data:`SHINGLE_WORDS` words)."""
    words = _words(piece)
    size = min(SHINGLE_WORDS, len(words))
    own = set(shingles(words, size))
    if not own:
        return 0.0
    added = set(shingles(_words(new), size)) - set(shingles(_words(old), size))
    return len(own & added) / len(own)


def echoed_framing(name: str, old: str, new: str) -> tuple[str, float] | None:
    """The piece of :func:`request_framing` ``new`` echoes most, with its share
    (:func:`echoed_share`), when that is :data:`ECHO_LIMIT` or more; None if none is.

    Why this test: a model that cannot do the edit (a small local one, say) copies its input.
    The copy keeps every placeholder, since the request lists them, and differs from the old
    template, so the other checks pass and it would be stored as the next version, to be run
    by the user's system with our instructions inside their prompt. The framing addresses the
    model and has no place in any template, so finding it is evidence of an echo rather than
    a judgment of the edit's quality. The edit instructions are not framing: applying one may
    rightly copy its sentence into the template word for word. An echo of the instructions and
    the template alone is therefore not caught, and is not told apart from a faithful edit.
    """
    shares = [(p, echoed_share(p, old, new)) for p in request_framing(name, old)]
    piece, share = max(shares, key=lambda item: item[1])
    return (piece, share) if share >= ECHO_LIMIT else None


def _refused(why: str, msg: str) -> InvalidInput:
    return InvalidInput(
        f"{why}: refused, nothing stored",
        details=[{"loc": ["proposal", "text"], "msg": msg}],
    )


def check_repetition(old: str, new: str) -> None:
    """Refuse a proposal holding the current template more than once, or repeating itself
    beyond what ``old`` repeats (:func:`added_repetition`) at :data:`REPEAT_LIMIT` or more."""
    copies = _flat(new).count(_flat(old)) if _flat(old) else 0
    if copies > 1:
        raise _refused(
            f"the LLM's proposal repeats the current template: it holds it {copies} times "
            "(a model copying its input, not an edit)",
            f"repeats the current template {copies} times",
        )
    share = added_repetition(old, new)
    if share >= REPEAT_LIMIT:
        raise _refused(
            f"the LLM's proposal repeats itself: {share:.0%} of its {SHINGLE_WORDS}-word "
            "sequences repeat one earlier in it, beyond the current template's own repeats "
            f"(refused at {REPEAT_LIMIT:.0%}): the same lines over and over, as a model that "
            "loops writes them",
            f"added repetition {share:.2f}",
        )


def check_proposal(name: str, old: str, new: str, finish_reason: str | None, cap: int) -> None:
    """Refuse (``InvalidInput``, nothing stored) a proposal cut at the output limit (``cap``
    tokens), an empty one, one repeating the current template or itself
    (:func:`check_repetition`), one that echoes the edit request (:func:`echoed_framing`), one
    that drops a placeholder of ``old``, or one unchanged but for whitespace."""
    if finish_reason == "length":
        # A cut template lost its end (often the output format it asks for); whatever the
        # rest of it looks like, it is not the edit the model meant.
        raise InvalidInput(
            f"the LLM's proposal was cut at its output limit (finish_reason length, at most "
            f"{cap} tokens asked): refused, nothing stored; the model did not finish the "
            "template (a server-side output cap below that, or a model that runs on, does this)",
            details=[{"loc": ["proposal", "finish_reason"], "msg": "length"}],
        )
    if not new.strip():
        raise _refused("the LLM proposed an empty prompt", "empty")
    check_repetition(old, new)
    echoed = echoed_framing(name, old, new)
    if echoed is not None:
        piece, share = echoed
        raise _refused(
            f"the LLM's proposal echoes the edit request: it holds {share:.0%} of the "
            f"request's own {piece!r} (refused at {ECHO_LIMIT:.0%}), which addresses the model "
            "and is no template's; the model copied its input instead of editing the template",
            f"echoes the request: {piece}",
        )
    missing = [p for p in placeholders(old) if p not in new]
    if missing:
        raise InvalidInput(
            f"the proposed prompt drops placeholders {', '.join(missing)}: refused, nothing stored",
            details=[
                {"loc": ["proposal", "text"], "msg": f"placeholder {p} missing"} for p in missing
            ],
        )
    if _flat(new) == _flat(old):
        raise _refused("the LLM proposed the prompt unchanged", "unchanged")
