"""Labelled traces from real LoCoMo conversations and their recorded extraction output.

LoCoMo ships, per session and speaker, the facts an LLM extracted ("observations"), each citing the
turns it came from. That makes a real extraction step whose losses are known: a question whose only
evidence turn no observation cites lost its information at extraction. Per conversation:

- every turn is a ``message`` unit (``Speaker: text``; its dia id only in attributes);
- per session and speaker, one ``extraction`` operation consumes the session's turns and produces
  that speaker's observations as ``memory`` units (the citations stay out of the batch);
- per answerable question (category != 5, exactly one evidence turn), an Okapi BM25 retrieval
  over all the conversation's memories produces a ``context``, and an ``answer`` operation
  (kind ``response``) answers mechanically: with the first retrieved memory citing the evidence
  turn, or, for a deterministic ~30% of those, deliberately wrong; "I don't know" otherwise.

``search`` says what a retrieval operation consumes: ``top_k`` (default) the memories it chose,
``whole_store`` every memory live at question time, as a vector search reads the whole store
(and as Mem0's search or a RAG retriever is traced when the tracer records what was scored, not
only what was returned). The context, the answers and the labels are the same either way; the
answer's ancestry is then the whole conversation's trace, which is what an attribution reads.

Labels follow mechanically: evidence cited by no observation -> ExtractionError (that session's
extraction for the evidence turn's speaker); cited but no citing memory retrieved ->
RetrievalError; retrieved but answered wrong -> ResponseError; else the case passed.

Run ``python3 -m benchmarks.datasets.locomo`` for the label count table.
"""

from __future__ import annotations

import argparse
import hashlib
import re
from collections import Counter
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path

from .bm25 import BM25
from .builder import BatchBuilder, batch_tag
from .labels import Label, LabelledBatch, count_labels, dump, format_counts
from .locomo_source import (
    QA,
    LocomoConversation,
    Turn,
    conversation_files,
    read_conversation,
)

SYSTEM = "locomo"
PIPELINES = ("observations", "rag", "long_context")
SEARCHES = ("top_k", "whole_store")
SYSTEMS = {"observations": SYSTEM, "rag": "locomo-rag", "long_context": "locomo-long"}
CHUNK_TURNS = 4
CHUNK_CHARS = 600  # the RAG chunker's budget: a turn that does not fit is silently dropped
BUFFER_CHARS = 45_000  # the long-context buffer keeps this many characters, newest last
EXTRACT = "extract_observations"
CHUNK = "chunk_turns"
BUFFER_UPDATE = "buffer_update"
RETRIEVE = "bm25_retrieval"
ANSWER = "answer"
IDK = "I don't know."
DEFAULT_PROJECT = "locomo"


def _draw(seed: int, *parts: object) -> float:
    """A deterministic number in [0, 1) per (seed, parts), independent of iteration order."""
    text = "|".join(str(p) for p in (seed, *parts))
    return int(hashlib.sha256(text.encode("utf-8")).hexdigest()[:8], 16) / 2**32


def _normal(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


def answer_phrase(question: str, answer: str) -> str:
    """The expected answer as a phrase a unit can hold verbatim (lower-cased words), or "" when it
    is too short or already in the question to say anything."""
    phrase = _normal(answer)
    if len(phrase) < 3 or not re.search(r"[a-z]{3}|\d", phrase) or phrase in _normal(question):
        return ""
    return phrase


def holds(text: str, phrase: str) -> bool:
    """Whether ``text`` states ``phrase`` (whole words, case and punctuation ignored)."""
    return bool(phrase) and f" {phrase} " in f" {_normal(text)} "


def skip_reason(qa: QA, dia_ids: set[str]) -> str | None:
    """Why a question is left out, or None if it becomes a case."""
    if qa.category == 5:
        return "adversarial"
    if len(qa.evidence) != 1:
        return "not exactly one evidence turn"
    if qa.evidence[0] not in dia_ids:
        return "evidence turn missing"
    return None


def _wrong_answer(conv: LocomoConversation, qa: QA) -> str:
    """The gold answer of the next question of the same category with a different answer."""
    ordered = conv.qa[qa.index + 1 :] + conv.qa[: qa.index]
    for other in ordered:
        if other.category == qa.category and other.answer.strip().lower() not in (
            "",
            qa.answer.strip().lower(),
        ):
            return other.answer
    return IDK


class _Builder:
    """Builds one conversation's batch; keeps the observation citations on the side."""

    def __init__(
        self,
        conv: LocomoConversation,
        project: str,
        seed: int,
        pipeline: str = "observations",
        search: str = "top_k",
    ) -> None:
        if search not in SEARCHES:
            raise ValueError(f"search must be one of {SEARCHES}, not {search!r}")
        self.conv = conv
        self.seed = seed
        self.pipeline = pipeline
        self.search = search
        self.system = SYSTEMS[pipeline]
        tag = ("locomo", conv.name) if pipeline == "observations" else (pipeline, conv.name)
        self.b = BatchBuilder(project, batch_tag(project, *tag), conv.sessions[0].when)
        # How the trace names its scope (see service.attribution.scope): the observations
        # pipeline stamps a conversation attribute, the RAG one a user attribute on its messages,
        # the long-context one a session id per conversation.
        self.scope: dict[str, str] = (
            {"conversation_id": conv.name} if pipeline == "observations" else {}
        )
        self.session = f"{pipeline}-{conv.name}" if pipeline == "long_context" else None
        self.dropped: dict[str, str] = {}  # dia id -> the operation that lost it (rag, long)
        self.buffer: str | None = None
        self.lines: list[str] = []
        self.versions: list[tuple[str, list[str]]] = []  # long context: (update, lines kept)
        self.phrases: dict[str, str] = {}  # case -> answer phrase (hidden, for the oracle)
        self.message: dict[str, str] = {}  # dia id -> message unit
        self.speaker: dict[str, str] = {}  # dia id -> speaker
        self.session_of: dict[str, int] = {}
        self.extraction: dict[tuple[int, str], str] = {}  # (session, speaker) -> operation
        self.memories: list[str] = []
        self.citations: dict[str, list[str]] = {}  # memory unit -> cited dia ids (hidden)
        self.labels: dict[str, Label] = {}
        self.evidence: dict[str, str] = {}  # case -> evidence dia id
        self.skipped: Counter[str] = Counter()

    def sessions(self) -> None:
        b = self.b
        for session in self.conv.sessions:
            b.jump_to(session.when)
            ids = []
            for turn in session.turns:
                extra: dict[str, object] = {"image_caption": turn.caption} if turn.caption else {}
                if self.pipeline == "rag":
                    extra["user_id"] = f"user-{self.conv.name}"
                unit = b.unit(
                    "message",
                    f"{turn.speaker}: {turn.text}",
                    dia_id=turn.dia_id,
                    session=session.number,
                    **extra,
                )
                self.message[turn.dia_id] = unit
                self.speaker[turn.dia_id] = turn.speaker
                self.session_of[turn.dia_id] = session.number
                ids.append(unit)
                b.advance(20)
            if self.pipeline == "rag":
                self._chunks(session.number, session.turns, ids)
                continue
            if self.pipeline == "long_context":
                self._append(session.number, session.turns, ids)
                continue
            for speaker in self.conv.speakers:
                facts = [
                    o
                    for o in self.conv.observations
                    if o.session == session.number and o.speaker == speaker
                ]
                outputs = [b.unit("memory", o.text) for o in facts]
                for unit, o in zip(outputs, facts, strict=True):
                    self.citations[unit] = list(o.cites)
                self.memories.extend(outputs)
                self.extraction[(session.number, speaker)] = b.op(
                    EXTRACT,
                    "extraction",
                    SYSTEM,
                    ids,
                    outputs,
                    session_id=f"session_{session.number}",
                    speaker=speaker,
                    **self.scope,
                )

    def _chunks(self, number: int, turns: Sequence[Turn], ids: list[str]) -> None:
        """RAG: every ``CHUNK_TURNS`` turns become one chunk; turns past ``CHUNK_CHARS`` are
        dropped (the chunker's real-world overflow bug, the source of its ExtractionErrors)."""
        for start in range(0, len(ids), CHUNK_TURNS):
            group = list(
                zip(
                    turns[start : start + CHUNK_TURNS],
                    ids[start : start + CHUNK_TURNS],
                    strict=True,
                )
            )
            kept: list[tuple[Turn, str]] = []
            size = 0
            for turn, unit in group:
                line = self.b.content[unit]
                if size + len(line) <= CHUNK_CHARS or not kept:
                    kept.append((turn, unit))
                    size += len(line) + 1
            chunk = self.b.unit("memory", "\n".join(self.b.content[u] for _, u in kept))
            self.citations[chunk] = [t.dia_id for t, _ in kept]
            self.memories.append(chunk)
            op = self.b.op(
                CHUNK,
                "extraction",
                self.system,
                [u for _, u in group],
                [chunk],
                session_id=f"session_{number}",
            )
            for turn, _ in group:
                if turn.dia_id not in self.citations[chunk]:
                    self.dropped[turn.dia_id] = op

    def _append(self, number: int, turns: Sequence[Turn], ids: list[str]) -> None:
        """Long context: the session's turns appended to the buffer, which keeps its last
        ``BUFFER_CHARS`` characters in whole lines; an update pushing a turn out loses it."""
        before = list(self.lines)
        self.lines += [self.b.content[u] for u in ids]
        while sum(len(line) + 1 for line in self.lines) > BUFFER_CHARS:
            self.lines.pop(0)
        new = self.b.unit("memory", "\n".join(self.lines), memory_id=f"buffer-{self.conv.name}")
        inputs = [self.buffer, *ids] if self.buffer else ids
        op = self.b.op(BUFFER_UPDATE, "update", self.system, inputs, [new], session_id=self.session)
        kept = set(self.lines)
        self.citations[new] = [d for d, u in self.message.items() if self.b.content[u] in kept]
        for line_unit, dia in [(u, d) for d, u in self.message.items()]:
            if self.b.content[line_unit] in before and self.b.content[line_unit] not in kept:
                self.dropped.setdefault(dia, op)
        self.buffer = new
        self.versions.append((op, list(self.lines)))

    def _pushed_out(self, evidence_text: str, phrase: str) -> str:
        """The update after the last buffer version that still carried the fact (the evidence
        turn, or any turn stating the answer): the one that pushed its last carrier out."""
        carried = [
            i
            for i, (_, lines) in enumerate(self.versions)
            if any(t == evidence_text or holds(t, phrase) for t in lines)
        ]
        return self.versions[carried[-1] + 1][0]

    def questions(self, top_k: int, wrong_fraction: float, evidence_fraction: float) -> None:
        if self.pipeline == "long_context":
            index = BM25(self.lines)
        else:
            index = BM25([self.b.content[u] for u in self.memories])
        cited = {d for cites in self.citations.values() for d in cites}
        if self.pipeline == "long_context":
            cited = set(self.citations[self.buffer]) if self.buffer else set()
        stored = (
            self.lines
            if self.pipeline == "long_context"
            else [self.b.content[u] for u in self.memories]
        )
        known = set(self.message)
        self.b.jump_to(self.conv.sessions[-1].when + timedelta(days=1))
        for qa in self.conv.qa:
            reason = skip_reason(qa, known)
            if reason:
                self.skipped[reason] += 1
                continue
            self._ask(
                qa,
                index,
                top_k,
                wrong=_draw(self.seed, self.conv.name, qa.index, "wrong") < wrong_fraction,
                with_evidence=_draw(self.seed, self.conv.name, qa.index, "ev") < evidence_fraction,
                # Redundancy: another memory stating the answer carries it just as well.
                extracted=qa.evidence[0] in cited
                or any(holds(t, answer_phrase(qa.question, qa.answer)) for t in stored),
            )

    def _ask(
        self, qa: QA, index: BM25, top_k: int, *, wrong: bool, with_evidence: bool, extracted: bool
    ) -> None:
        """Retrieve, answer, record the case and, if it failed, its label."""
        b, evidence = self.b, qa.evidence[0]
        phrase = answer_phrase(qa.question, qa.answer)
        query = b.unit("query", qa.question)
        extra = {**self.scope}
        if self.pipeline == "long_context":
            assert self.buffer is not None
            lines = [self.lines[i] for i in sorted(index.top(qa.question, top_k * 2))]
            context = b.unit("context", "\n".join(lines))
            inputs = [query, self.buffer]
            evidence_text = b.content[self.message[evidence]]
            carrying = [t for t in lines if t == evidence_text or holds(t, phrase)]
            citing = [context] if carrying else []
            answer_from = carrying[0] if carrying else ""
        else:
            chosen = [self.memories[i] for i in index.top(qa.question, top_k)]
            context = b.unit("context", "\n".join(b.content[u] for u in chosen))
            # no memory is ever replaced or deleted here: every one is live at question time
            inputs = [query, *(self.memories if self.search == "whole_store" else chosen)]
            citing = [
                u for u in chosen if evidence in self.citations[u] or holds(b.content[u], phrase)
            ]
            answer_from = b.content[citing[0]] if citing else ""
        retrieval = b.op(
            RETRIEVE,
            "retrieval",
            self.system,
            inputs,
            [context],
            session_id=self.session,
            top_k=top_k,
            k1=1.5,
            b=0.75,
            **extra,
        )
        text = IDK if not citing else _wrong_answer(self.conv, qa) if wrong else answer_from
        answer = b.unit("answer", text)
        response = b.op(
            ANSWER,
            "response",
            self.system,
            [query, context],
            [answer],
            session_id=self.session,
            **extra,
        )
        case = b.case(
            qa.question,
            qa.answer,
            answer,
            passed=bool(citing) and not wrong,
            evidence_units=[self.message[evidence]] if with_evidence else [],
            category=qa.category,
        )
        self.evidence[case] = evidence
        self.phrases[case] = phrase
        system = self.system
        if not extracted and self.pipeline == "long_context":
            op = self._pushed_out(b.content[self.message[evidence]], phrase)
            self.labels[case] = Label(error_type="UpdateError", operation_id=op, system=system)
        elif not extracted and self.pipeline == "rag":
            op = self.dropped[evidence]
            self.labels[case] = Label(error_type="ExtractionError", operation_id=op, system=system)
        elif not extracted:
            op = self.extraction[(self.session_of[evidence], self.speaker[evidence])]
            self.labels[case] = Label(error_type="ExtractionError", operation_id=op, system=system)
        elif not citing:
            self.labels[case] = Label(
                error_type="RetrievalError", operation_id=retrieval, system=system
            )
        elif wrong:
            self.labels[case] = Label(
                error_type="ResponseError", operation_id=response, system=system
            )


def build_conversation(
    conv: LocomoConversation,
    *,
    project: str = DEFAULT_PROJECT,
    top_k: int = 5,
    wrong_fraction: float = 0.3,
    evidence_fraction: float = 0.5,
    seed: int = 0,
    pipeline: str = "observations",
    search: str = "top_k",
) -> LabelledBatch:
    """One labelled batch for one parsed LoCoMo conversation traced by ``pipeline``, its
    retrievals consuming what ``search`` says (see the module docstring)."""
    builder = _Builder(conv, project, seed, pipeline, search)
    builder.sessions()
    builder.questions(top_k, wrong_fraction, evidence_fraction)
    hidden = {
        "conversation": conv.name,
        "citations": builder.citations,
        "evidence": builder.evidence,
        "skipped": dict(builder.skipped),
        "pipeline": pipeline,
        "phrases": builder.phrases,
    }
    return LabelledBatch(builder.b.build(), builder.labels, hidden)


def load_locomo(
    path: str | Path | None = None,
    *,
    project: str = DEFAULT_PROJECT,
    conversations: Sequence[str] | None = None,
    limit: int | None = None,
    top_k: int = 5,
    wrong_fraction: float = 0.3,
    evidence_fraction: float = 0.5,
    seed: int = 0,
    pipeline: str = "observations",
    search: str = "top_k",
) -> list[LabelledBatch]:
    """One labelled batch per LoCoMo conversation file under ``path``.

    ``path`` defaults to ``../shared/data/locomo10``; relative paths are resolved against the
    repository root. ``conversations`` picks files by stem (e.g. ``["26", "30"]``), ``limit``
    keeps the first N. ``seed`` only chooses which answers are made wrong and which cases name
    their evidence.
    """
    files = conversation_files(path)
    if conversations is not None:
        files = [f for f in files if f.stem in set(conversations)]
    return [
        build_conversation(
            read_conversation(f),
            project=project,
            top_k=top_k,
            wrong_fraction=wrong_fraction,
            evidence_fraction=evidence_fraction,
            seed=seed,
            pipeline=pipeline,
            search=search,
        )
        for f in files[:limit]
    ]


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Label counts of the LoCoMo-derived traces.")
    parser.add_argument("--path", default=None, help="LoCoMo directory (default: %(default)s)")
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--top-k", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", help="directory to write batch-NNN.json and labels.json to")
    args = parser.parse_args(argv)
    batches = load_locomo(args.path, limit=args.limit, top_k=args.top_k, seed=args.seed)
    print(format_counts(count_labels(batches, key=lambda x: x.hidden["conversation"]), "conv"))
    skipped: Counter[str] = Counter()
    for item in batches:
        skipped.update(item.hidden["skipped"])
    print("\nquestions left out: " + ", ".join(f"{k}: {v}" for k, v in sorted(skipped.items())))
    units = sum(len(x.batch["units"]) for x in batches)
    ops = sum(len(x.batch["operations"]) for x in batches)
    print(f"{len(batches)} batches, {units} units, {ops} operations")
    if args.out:
        dump(batches, args.out)


if __name__ == "__main__":
    main()
