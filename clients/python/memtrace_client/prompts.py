"""Prompt templates as versioned units: one definition of what a prompt version is.

A prompt has a stable ``name`` (``fact-extraction``) and versions. A version is an immutable
``prompt`` unit holding the template text; its id is derived from the name and a hash of the
text, ``prompt:<name>@<hash>``, so recording the same text twice (in two processes, or in a
re-sent batch) names one unit, and any other text is another version. Numbers (``@1``, ``@2``)
are given by the service in the order versions were first used; they are labels, not ids.

An operation that ran with a template consumes its version (``Tracer(..., prompt=...)``), so
the graph can say which version an attributed failure's operation used. The service reads the
same definitions (``graph_schema.prompts`` re-exports them).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from memtrace_client.models import UnitIn

PROMPT_NAME_RE = re.compile(r"^[A-Za-z0-9_.\-]{1,128}$")
"""A prompt name: it appears in URL paths (``/prompts/{name}``), so path-safe characters only."""

NAME_KEY = "prompt_name"
HASH_KEY = "prompt_hash"
"""The attributes every prompt version unit carries."""

PLACEHOLDER_RE = re.compile(r"\{\{\s*[A-Za-z_][\w.]*\s*\}\}|(?<!\{)\{[A-Za-z_]\w*\}(?!\})")
"""Template slots a pipeline fills in: ``{name}`` (str.format) and ``{{ name }}`` (Jinja,
Mustache). JSON examples in a prompt (``{"facts": [...]}``) do not match: a key is quoted."""


def text_hash(text: str) -> str:
    """The first 16 hex digits of the SHA-256 of the template text."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def check_name(name: str) -> str:
    if not PROMPT_NAME_RE.match(name):
        raise ValueError(f"a prompt name is 1-128 characters of [A-Za-z0-9_.-], not {name!r}")
    return name


def version_id(name: str, text: str) -> str:
    """The unit id of the version of prompt ``name`` whose template is ``text``."""
    return f"prompt:{check_name(name)}@{text_hash(text)}"


def placeholders(text: str) -> list[str]:
    """The template's slots, each once, in order of first appearance."""
    return list(dict.fromkeys(m.group(0) for m in PLACEHOLDER_RE.finditer(text)))


@dataclass(frozen=True)
class Prompt:
    """A prompt template: what ``prompt=`` takes and ``MemTraceClient.prompt`` returns.

    ``version`` is the service's label (``fact-extraction@2``) when the prompt came from it.
    """

    name: str
    text: str
    version: str | None = None

    @property
    def id(self) -> str:
        return version_id(self.name, self.text)

    def unit(self) -> UnitIn:
        """The version as a unit (no time: the same text sent twice must be identical)."""
        return UnitIn(
            id=self.id,
            kind="prompt",
            content=self.text,
            attributes={NAME_KEY: self.name, HASH_KEY: text_hash(self.text)},
        )


PromptLike = Prompt | tuple[str, str]
"""A ``Prompt``, or ``(name, template text)``."""


def as_prompt(value: PromptLike) -> Prompt:
    if isinstance(value, Prompt):
        check_name(value.name)
        return value
    name, text = value
    return Prompt(check_name(name), text)
