"""A store-rewriting data set: real LoCoMo observations through Mem0's decisions, labels by replay.

Built for issue 35 as an evaluation nobody tuned on: the engine ran on it only after it was
fixed. Per LoCoMo conversation (one Mem0 user, both speakers' memories in its store):

- every turn is a ``message`` unit; per session one ``extract_facts`` operation reads the turns
  and writes that session's LoCoMo observations (the data set's own LLM extraction, citations
  hidden) as fact units;
- per fact one ``update_memory_decision`` (see :mod:`.pipelines.mem0_rewrite`): ADD, UPDATE
  (merged, overwritten, or a detail dropped), DELETE (a retraction; or, for a deterministic
  ``delete_fraction`` of the questions, a wrong DELETE of the only memory carrying the answer),
  NONE (a near-duplicate);
- per answerable question (category != 5, exactly one evidence turn) a search reading the whole
  live store (every memory version live at question time) puts the top ``top_k`` by Okapi BM25
  into a context, and ``question-answering`` answers from it: with the carrying memory, or, for a
  deterministic ``wrong_fraction``, with another question's answer; "I don't know" when the
  context carries nothing.

A unit *carries* a case when it holds, verbatim, an observation citing the case's evidence turn,
or states the answer phrase (:func:`carries`). The labels replay the construction steps over the
set of units the system holds (pending facts, live memory versions):

- nothing ever carried -> ExtractionError, the evidence session's extraction;
- carried, but nothing live carries at question time -> the first step that took the last carrier
  out: DeletionError if it was a DELETE, else UpdateError (an UPDATE or a NONE);
- a live memory carries but the context does not -> RetrievalError; the context carries and the
  answer is wrong -> ResponseError; otherwise the case passed.

Cases name no evidence units (the headline: no hints); the evidence turn is kept in ``hidden``
for a run with hints. The split is by conversation and fixed here: :data:`TUNE`, :data:`HELDOUT`.

Run ``python3 -m benchmarks.datasets.rewrite`` for the label and decision counts.
"""

from __future__ import annotations

import argparse
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from .bm25 import BM25
from .builder import BatchBuilder, batch_tag
from .copies import unnamed
from .labels import ErrorType, Label, LabelledBatch, count_labels, format_counts
from .locomo import IDK, _draw, _wrong_answer, answer_phrase, holds, skip_reason
from .locomo_source import LocomoConversation, conversation_files, read_conversation
from .pipelines.mem0_rewrite import ANSWER, SEARCH, SYSTEM, Memory, Step, UserStore

TUNE = ("26", "30", "41", "42", "43")  # LoCoMo conversations 0-4, as the other LoCoMo sets
HELDOUT = ("44", "47", "48", "49", "50")  # conversations 5-9: reported, never tuned on
HALVES = {"tune": TUNE, "heldout": HELDOUT}
SHAPES = ("rewrite", "rewrite-unnamed", "rewrite-shared", "rewrite-shared-unnamed")
"""Per-conversation projects or one project of every user of a half; conversation ids or none."""
PIPELINE = "mem0_rewrite"


def half_of(conversation: str) -> str:
    for half, members in HALVES.items():
        if conversation in members:
            return half
    raise ValueError(f"conversation {conversation!r} is in neither half")


@dataclass(frozen=True)
class Need:
    """What one question needs: its evidence turn, the observations citing it, its answer."""

    qa_index: int
    evidence: str
    observations: tuple[str, ...]
    phrase: str


def carries(text: str, need: Need) -> bool:
    """Whether a unit's content carries what the question needs (see the module docstring)."""
    return any(o in text for o in need.observations) or holds(text, need.phrase)


class _Builder:
    def __init__(
        self, conv: LocomoConversation, project: str, seed: int, delete_fraction: float
    ) -> None:
        self.conv, self.seed = conv, seed
        self.b = BatchBuilder(
            project, batch_tag(project, PIPELINE, conv.name), conv.sessions[0].when
        )
        user = f"user-{batch_tag(project, conv.name)}"
        self.store = UserStore(
            self.b,
            user,
            conv.name,
            frozenset(s.lower() for s in conv.speakers),
            {"conversation_id": conv.name},
        )
        self.message: dict[str, str] = {}
        self.skipped: Counter[str] = Counter()
        known = {t.dia_id for s in conv.sessions for t in s.turns}
        self.needs: list[Need] = []
        for qa in conv.qa:
            reason = skip_reason(qa, known)
            if reason:
                self.skipped[reason] += 1
                continue
            cited = tuple(o.text for o in conv.observations if qa.evidence[0] in o.cites)
            self.needs.append(
                Need(qa.index, qa.evidence[0], cited, answer_phrase(qa.question, qa.answer))
            )
        self.targets = {
            i
            for i, n in enumerate(self.needs)
            if _draw(seed, conv.name, n.qa_index, "delete") < delete_fraction
        }
        self.injected: set[int] = set()
        self.alive: set[str] = set()
        self._carry: dict[tuple[str, int], bool] = {}
        self._applied = 0

    def carrying(self, unit: str, need: int) -> bool:
        key = (unit, need)
        if key not in self._carry:
            self._carry[key] = carries(self.b.content[unit], self.needs[need])
        return self._carry[key]

    def _sync(self) -> None:
        for step in self.store.steps[self._applied :]:
            self.alive.difference_update(step.died)
            self.alive.update(step.born)
        self._applied = len(self.store.steps)

    def _wrong_delete(self, memory: Memory) -> bool:
        """Delete ``memory`` wrongly when it is the only unit held that carries a target."""
        for i in sorted(self.targets - self.injected):
            if self.carrying(memory.unit, i) and not any(
                self.carrying(u, i) for u in self.alive if u != memory.unit
            ):
                self.injected.add(i)
                return True
        return False

    def sessions(self) -> dict[int, str]:
        """Trace every session; returns the extraction operation per session number."""
        extraction = {}
        for session in self.conv.sessions:
            self.b.jump_to(session.when)
            ids = []
            for turn in session.turns:
                extra: dict[str, object] = {"image_caption": turn.caption} if turn.caption else {}
                unit = self.b.unit(
                    "message",
                    f"{turn.speaker}: {turn.text}",
                    dia_id=turn.dia_id,
                    session=session.number,
                    user_id=self.store.user,
                    **extra,
                )
                self.message[turn.dia_id] = unit
                ids.append(unit)
                self.b.advance(20)
            facts = [o for o in self.conv.observations if o.session == session.number]
            sid = f"session_{session.number}"
            op, units = self.store.extract(ids, [o.text for o in facts], sid)
            extraction[session.number] = op
            self._sync()
            for fact, unit in zip(facts, units, strict=True):
                self.store.decide(unit, fact.speaker, sid, self._wrong_delete)
                self._sync()
        return extraction

    def label_construction(self, need: int, extraction: dict[int, str]) -> Label | None:
        """Replay the steps: the construction label of a case nothing live carries, else None."""
        held: set[str] = set()
        ever, loss = False, None
        for step in self.store.steps:
            before = bool(held)
            held.difference_update(step.died)
            held.update(u for u in step.born if self.carrying(u, need))
            ever = ever or bool(held)
            if before and not held and loss is None:
                loss = step
        if held:
            return None
        if not ever:
            session = int(self.needs[need].evidence[1:].split(":")[0])
            return Label(
                error_type="ExtractionError", operation_id=extraction[session], system=SYSTEM
            )
        assert loss is not None
        return Label(error_type=_loss_type(loss), operation_id=loss.op, system=SYSTEM)

    def questions(
        self, extraction: dict[int, str], top_k: int, wrong_fraction: float
    ) -> tuple[dict[str, Label], dict[str, Need]]:
        b, live = self.b, sorted(self.store.live.values(), key=lambda m: m.memory_id)
        index = BM25([m.text for m in live])
        b.jump_to(self.conv.sessions[-1].when + timedelta(days=1))
        labels: dict[str, Label] = {}
        needs: dict[str, Need] = {}
        for i, need in enumerate(self.needs):
            qa = self.conv.qa[need.qa_index]
            query = b.unit("query", qa.question)
            chosen = [live[j] for j in index.top(qa.question, top_k)]
            context = b.unit("context", "\n".join(m.text for m in chosen))
            retrieval = b.op(
                SEARCH,
                "retrieval",
                SYSTEM,
                [query, *(m.unit for m in live)],
                [context],
                top_k=top_k,
                **self.store.stamp,
            )
            in_context = carries(b.content[context], need)
            wrong = _draw(self.seed, self.conv.name, qa.index, "wrong") < wrong_fraction
            carrier = next((m.text for m in chosen if carries(m.text, need)), qa.answer)
            text = IDK if not in_context else _wrong_answer(self.conv, qa) if wrong else carrier
            answer = b.unit("answer", text)
            response = b.op(
                ANSWER, "response", SYSTEM, [query, context], [answer], **self.store.stamp
            )
            label = self.label_construction(i, extraction)
            if label is None and not in_context:
                label = Label(error_type="RetrievalError", operation_id=retrieval, system=SYSTEM)
            elif label is None and wrong:
                label = Label(error_type="ResponseError", operation_id=response, system=SYSTEM)
            case = b.case(
                qa.question, qa.answer, answer, passed=label is None, category=qa.category
            )
            needs[case] = need
            if label is not None:
                labels[case] = label
        return labels, needs


def _loss_type(step: Step) -> ErrorType:
    return "DeletionError" if step.event == "DELETE" else "UpdateError"


def build_conversation(
    conv: LocomoConversation,
    *,
    project: str,
    named: bool = True,
    top_k: int = 5,
    wrong_fraction: float = 0.3,
    delete_fraction: float = 0.3,
    seed: int = 0,
) -> LabelledBatch:
    """One labelled batch: ``conv`` through the rewriting Mem0 store, in ``project``; without any
    conversation, user or session named when ``named`` is false."""
    builder = _Builder(conv, project, seed, delete_fraction)
    extraction = builder.sessions()
    labels, needs = builder.questions(extraction, top_k, wrong_fraction)
    batch = builder.b.build()
    memories = [u for u in batch["units"] if u["kind"] == "memory"]
    citations = {
        u["id"]: [d for o in conv.observations if o.text in u["content"] for d in o.cites]
        for u in memories
    }
    hidden: dict[str, Any] = {
        "conversation": conv.name,
        "half": half_of(conv.name),
        "pipeline": PIPELINE,
        "citations": citations,
        "evidence": {case: need.evidence for case, need in needs.items()},
        "phrases": {case: need.phrase for case, need in needs.items()},
        "observations": {case: list(need.observations) for case, need in needs.items()},
        "hints": {case: [builder.message[need.evidence]] for case, need in needs.items()},
        "decisions": dict(Counter(s.event for s in builder.store.steps)),
        "injected_deletes": len(builder.injected),
        "skipped": dict(builder.skipped),
    }
    return LabelledBatch(batch if named else unnamed(batch), labels, hidden)


def load_rewrite(
    path: str | Path | None = None,
    *,
    shape: str = "rewrite",
    conversations: Sequence[str] | None = None,
    **options: Any,
) -> list[LabelledBatch]:
    """One labelled batch per conversation, in the projects and naming of ``shape``
    (:data:`SHAPES`): ``rewrite-<conv>`` projects, or one ``<shape>`` project holding every user."""
    if shape not in SHAPES:
        raise ValueError(f"shape must be one of {SHAPES}, not {shape!r}")
    files = conversation_files(path)
    if conversations is not None:
        files = [f for f in files if f.stem in set(conversations)]
    shared = "shared" in shape
    return [
        build_conversation(
            read_conversation(f),
            project=shape if shared else f"{shape}-{f.stem}",
            named=not shape.endswith("unnamed"),
            **options,
        )
        for f in files
    ]


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Label and decision counts of the rewrite set.")
    parser.add_argument("--path", default=None)
    args = parser.parse_args(argv)
    batches = load_rewrite(args.path)
    print(format_counts(count_labels(batches, key=lambda x: x.hidden["conversation"]), "conv"))
    decisions: Counter[str] = Counter()
    for item in batches:
        decisions.update(item.hidden["decisions"])
    print("\ndecisions: " + ", ".join(f"{k}: {v}" for k, v in sorted(decisions.items())))
    print("injected wrong deletes:", sum(x.hidden["injected_deletes"] for x in batches))


if __name__ == "__main__":
    main()
