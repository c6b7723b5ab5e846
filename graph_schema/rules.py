"""What the audits and the attribution walk both decide, defined once here.

The audits are Cypher (``cypher/audits``), the walk is Python (``service/attribution``); each
rule below is written in Python here and as one Cypher block that every statement using it holds
verbatim, between ``// rule: <name>`` and ``// end rule`` (tests/audits/test_audit_agreement.py
holds the copies equal, and runs the audits and ``POST /attribute`` on the same traces).

**Question time kinds.** Operations of kind retrieval, response or evaluation read the memory
at question time; every other kind builds it (:data:`QUESTION_TIME_KINDS`).

**Source message** (rule ``source message``). A unit of kind ``message`` that no operation
produced, and that is not read only at question time: no operation consumed it (a turn the system
dropped), or at least one operation that builds the memory did. So the answering call's own
message ("Question: ... Memories: - ..."), which a client adapter records as a ``message`` read
by the response alone, is not a source message: ``construction_loss`` does not report it lost,
and the walk never takes it for evidence (``cypher/attribution/scope_messages``; for the messages
of the answer's lineage, :func:`is_source_message` on the operations the case's graph holds).

A message that holds, verbatim, the whole text of a ``context`` or ``answer`` unit its reader
also read (at least :data:`QUOTED_CHARS` characters of it) is a prompt assembled from what that
reader was given, not something a person said: Mem0's deciding call reads "Current memory:
[...] New facts: [...]", the memories it retrieved and the facts the extraction answered, as one
user message. Only a building reader that quotes nothing of its own inputs makes a message a
source: the user's turn an agent reads beside its retrieved memories before writing one stays a
source message, the deciding call's prompt is none (else the evidence search, finding every
fact of a session in it, takes it for the turn that said them).

**Evidence units** (rule ``evidence units``). A case's ``evidence_units`` when it names any;
else the evidence its stored attribution found (``evidence`` of the result, kept on the
``Attribution`` node). The walk searches for evidence in Python (BM25 and a judge), which Cypher
cannot repeat: a case with neither is not reported by the audits that start from evidence.

**Carried forward** (rule ``carried forward``). What a memory holds from the evidence: the units
reached from an evidence unit through operations that build the memory, where a step from a
version of a memory entry (``memory_id``) goes only to that entry's next versions or tombstone,
as the walk follows an entry (``service/attribution/construction.py``); within 10 operation
steps. An operation that consumed a whole store (an update deciding over every memory) therefore
does not pass one entry's information into another entry's version.

**Retrieval miss** (rule ``live at question time``). A memory carried forward from the evidence
that was live when the question was asked, which no retrieval of the answer's lineage put into
the context. Live: produced before the question, and no operation that builds the memory consumed
it before the question and (for a version of an entry) produced a next version or tombstone of
that entry, (for a unit of no entry) at all: ``construction.is_live``. A memory deleted before
the question is so a deletion (``deleted_then_needed``), never a retrieval miss.

The audits decide "carries the answer" by the expected answer's words (``min_answer_coverage``),
the walk by its judge: on a unit where the two differ they can still disagree.
"""

from __future__ import annotations

from collections.abc import Iterable

QUESTION_TIME_KINDS = frozenset({"retrieval", "response", "evaluation"})
"""Operation kinds that read the memory at question time; every other kind builds it."""

RULES = ("source message", "evidence units", "carried forward", "live at question time")
"""The rules whose Cypher block is held equal wherever it appears."""


QUOTED_CHARS = 20
"""How long a context or answer must be before a message holding it counts as quoting it: a
short answer ("Yes", "Paris") recurs in what people say."""
QUOTED_KINDS = ("context", "answer")
"""The units a prompt is assembled from: what a retrieval handed over, what an LLM call answered."""


def quotes(content: str, read: Iterable[tuple[str, str]]) -> bool:
    """Whether a message's ``content`` holds the whole text of one of ``read`` (its reader's
    inputs as (kind, content)) that is a :data:`QUOTED_KINDS` unit of :data:`QUOTED_CHARS` or
    more: ``m.content CONTAINS q.content`` in the Cypher block."""
    return any(
        kind in QUOTED_KINDS and len(text) >= QUOTED_CHARS and text in content
        for kind, text in read
    )


def is_source_message(
    kind: str, producer_kinds: Iterable[str], consumers: Iterable[tuple[str, bool]]
) -> bool:
    """The ``source message`` rule for a unit of ``kind`` made by operations of
    ``producer_kinds`` and read by ``consumers``: (kind, whether the message :func:`quotes`
    that reader's inputs) of each operation reading it."""
    if kind != "message" or any(True for _ in producer_kinds):
        return False
    readers = list(consumers)
    return not readers or any(k not in QUESTION_TIME_KINDS and not quoted for k, quoted in readers)
