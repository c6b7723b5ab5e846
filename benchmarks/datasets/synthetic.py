"""Fault-injected synthetic traces of four memory-system shapes, with ground-truth labels.

Real traces rarely come with reliable operation-level labels; here every failed case has exactly
one injected decisive fault, so the label (error type and the earliest faulty operation) is true by
construction. Systems: ``naive_rag``, ``long_context``, ``mem0`` and ``evermemos``, with the
operation names of the MemTrace paper's traces. Each batch is one conversation in one system.

Run ``python3 -m benchmarks.datasets.synthetic`` for a label count table.
"""

from __future__ import annotations

import argparse
import random
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Protocol

from .builder import BatchBuilder, batch_tag
from .conversation import Conversation, plan_conversation
from .labels import ErrorType, Label, LabelledBatch, count_labels, dump, format_counts
from .pipelines import evermemos, long_context, mem0, naive_rag


class _Pipeline(Protocol):
    SYSTEM: str
    ERRORS: tuple[ErrorType, ...]
    NEEDS_FOLLOW_UP: frozenset[ErrorType]

    def build(
        self, conv: Conversation, b: BatchBuilder, rng: random.Random, top_k: int
    ) -> dict[str, Label]: ...


_PIPELINES: dict[str, _Pipeline] = {p.SYSTEM: p for p in (naive_rag, long_context, mem0, evermemos)}
SYSTEMS: tuple[str, ...] = tuple(_PIPELINES)
APPLICABLE_ERRORS: dict[str, tuple[ErrorType, ...]] = {n: p.ERRORS for n, p in _PIPELINES.items()}
DEFAULT_PROJECT = "memtrace-synthetic"
_START = datetime(2023, 1, 2, 9, 0, tzinfo=UTC)


def plan_scenarios(
    rng: random.Random, errors: Sequence[ErrorType], n_questions: int, passed_fraction: float
) -> list[ErrorType | None]:
    """Round-robin over ``errors`` for the failed questions (so each appears once there are
    enough), ``None`` for the passed ones, in shuffled order."""
    n_passed = round(n_questions * passed_fraction)
    plan: list[ErrorType | None] = [errors[i % len(errors)] for i in range(n_questions - n_passed)]
    plan += [None] * n_passed
    rng.shuffle(plan)
    return plan


def generate_conversation(
    system: str,
    seed: int = 0,
    *,
    index: int = 0,
    n_sessions: int = 6,
    n_distractors: int = 60,
    n_questions: int = 12,
    passed_fraction: float = 0.2,
    evidence_fraction: float = 0.5,
    top_k: int = 5,
    project: str = DEFAULT_PROJECT,
) -> LabelledBatch:
    """One labelled trace: conversation ``index`` of ``system`` for ``seed``.

    Size grows with ``n_sessions`` and ``n_distractors`` (60 distractors: a few hundred
    operations; 2,000: several thousand). ``evidence_fraction`` of the cases name their evidence
    message; the others leave the attributor to find it.
    """
    if system not in _PIPELINES:
        raise ValueError(f"unknown system {system!r}; choose from {', '.join(SYSTEMS)}")
    if n_questions < 1 or n_distractors < 0:
        raise ValueError("n_questions must be >= 1 and n_distractors >= 0")
    pipeline = _PIPELINES[system]
    rng = random.Random(f"{seed}|{system}|{index}")
    scenarios = plan_scenarios(rng, pipeline.ERRORS, n_questions, passed_fraction)
    conv = plan_conversation(
        rng,
        scenarios,
        n_sessions=n_sessions,
        n_distractors=n_distractors,
        needs_follow_up=pipeline.NEEDS_FOLLOW_UP,
        evidence_fraction=evidence_fraction,
        start=_START + timedelta(days=365 * index),
    )
    # The trace names its conversation on every operation, as a tracer stamps a user or thread id
    # (how a case's scope is found: service/attribution/scope.py).
    tag = batch_tag(project, seed, system, index)
    b = BatchBuilder(project, tag, conv.start, stamp={"conversation_id": f"{system}-{tag}"})
    labels = pipeline.build(conv, b, rng, top_k)
    batch = b.build()
    facts = {c["id"]: q.fact.statement for c, q in zip(batch["cases"], conv.questions, strict=True)}
    return LabelledBatch(batch, labels, {"facts": facts})


def generate_synthetic(
    seed: int = 0,
    *,
    systems: Sequence[str] = SYSTEMS,
    n_conversations: int = 2,
    n_sessions: int = 6,
    n_distractors: int = 60,
    n_questions: int = 12,
    passed_fraction: float = 0.2,
    evidence_fraction: float = 0.5,
    top_k: int = 5,
    project: str = DEFAULT_PROJECT,
) -> list[LabelledBatch]:
    """``n_conversations`` labelled traces per system (see :func:`generate_conversation`)."""
    return [
        generate_conversation(
            system,
            seed,
            index=index,
            n_sessions=n_sessions,
            n_distractors=n_distractors,
            n_questions=n_questions,
            passed_fraction=passed_fraction,
            evidence_fraction=evidence_fraction,
            top_k=top_k,
            project=project,
        )
        for system in systems
        for index in range(n_conversations)
    ]


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--conversations", type=int, default=2)
    parser.add_argument("--sessions", type=int, default=6)
    parser.add_argument("--distractors", type=int, default=60)
    parser.add_argument("--questions", type=int, default=12)
    parser.add_argument("--out", help="directory to write batch-NNN.json and labels.json to")
    args = parser.parse_args(argv)
    batches = generate_synthetic(
        args.seed,
        n_conversations=args.conversations,
        n_sessions=args.sessions,
        n_distractors=args.distractors,
        n_questions=args.questions,
    )
    print(format_counts(count_labels(batches)))
    units = [len(x.batch["units"]) for x in batches]
    ops = [len(x.batch["operations"]) for x in batches]
    print(f"\n{len(batches)} batches: {min(units)}-{max(units)} units, ", end="")
    print(f"{min(ops)}-{max(ops)} operations each")
    if args.out:
        dump(batches, args.out)


if __name__ == "__main__":
    main()
