"""Prompt versions in the graph, defined once in the client distribution
(``memtrace_client.prompts``): a version is a ``(:Unit {kind: "prompt"})`` with id
``prompt:<name>@<hash of text>`` and attributes ``prompt_name`` and ``prompt_hash``.

    (:Operation)-[:CONSUMES]->(:Unit {kind: "prompt"})    the operation ran with that version
    (:Operation {kind: "optimization"})-[:CONSUMES]->(old version)
    (:Operation {kind: "optimization"})-[:PRODUCES]->(new version)
    (:Operation {kind: "optimization"})-[:USED]->(:Attribution)   the failures that motivated it

A version's number (``name@1``, ``@2``, ...) is its rank among the name's versions by when each
was first used (the earliest operation consuming or producing it); ids never depend on it.
"""

from memtrace_client.prompts import (
    HASH_KEY,
    NAME_KEY,
    PROMPT_NAME_RE,
    Prompt,
    check_name,
    placeholders,
    text_hash,
    version_id,
)

OPTIMIZATION_KIND = "optimization"

__all__ = [
    "HASH_KEY",
    "NAME_KEY",
    "OPTIMIZATION_KIND",
    "PROMPT_NAME_RE",
    "Prompt",
    "check_name",
    "placeholders",
    "text_hash",
    "version_id",
]
