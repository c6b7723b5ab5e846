"""The store-rewriting data set's labels follow from its trace, and its split is by conversation.

The labels are not trusted: :func:`label_problems` reads the batch the service would ingest (and
LoCoMo's own observations and questions), replays which units the system holds after every
operation, and checks each label against what the trace shows. A checker that passed anything
would be worthless, so the last test moves labels and expects it to object. No network, no
database; skipped when ../shared/data/locomo10 is not there.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from memtrace_client.models import TraceBatch

from benchmarks.attribution.accuracy import HELDOUT as LOCOMO_HELDOUT
from benchmarks.attribution.accuracy import TUNE as LOCOMO_TUNE
from benchmarks.datasets import LabelledBatch
from benchmarks.datasets.copies import NAMING_ATTRIBUTES
from benchmarks.datasets.locomo import answer_phrase, holds
from benchmarks.datasets.locomo_source import (
    LocomoConversation,
    conversation_files,
    read_conversation,
    resolve_dir,
)
from benchmarks.datasets.rewrite import HELDOUT, SHAPES, TUNE, load_rewrite

LOCOMO_DIR = resolve_dir(None)
SAMPLE = ("26", "44")  # one conversation of each half
pytestmark = pytest.mark.skipif(not LOCOMO_DIR.is_dir(), reason="LoCoMo data not available")


@pytest.fixture(scope="module")
def conversations() -> dict[str, LocomoConversation]:
    return {f.stem: read_conversation(f) for f in conversation_files() if f.stem in SAMPLE}


@pytest.fixture(scope="module")
def shapes() -> dict[str, list[LabelledBatch]]:
    return {shape: load_rewrite(shape=shape, conversations=SAMPLE) for shape in SHAPES}


class Trace:
    """What the trace alone says: operations in order, units, and the units the system holds
    (pending facts, live memory versions) after each construction operation."""

    def __init__(self, batch: dict[str, Any]) -> None:
        self.units = {u["id"]: u for u in batch["units"]}
        self.ops = batch["operations"]
        self.op = {o["id"]: o for o in self.ops}
        self.held: dict[str, frozenset[str]] = {}  # op id -> what is held after it
        held: set[str] = set()
        for o in self.ops:
            if o["kind"] == "extraction":
                held.update(o["outputs"])
            elif o["kind"] == "update":
                held.discard(o["inputs"][0])  # the fact decided on
                for out in o["outputs"]:
                    mid = self.memory_id(out)
                    # a new version or a tombstone ends the live version of its memory
                    held.difference_update(u for u in o["inputs"] if self.memory_id(u) == mid)
                    if self.units[out]["kind"] == "memory":
                        held.add(out)
            self.held[o["id"]] = frozenset(held)
        self.live = frozenset(held)  # no construction runs after the first question

    def memory_id(self, unit: str) -> str | None:
        value = (self.units[unit].get("attributes") or {}).get("memory_id")
        return str(value) if value else None

    def content(self, unit: str) -> str:
        return str(self.units[unit]["content"])


def _carrier(
    conv: LocomoConversation, case: dict[str, Any], evidence: str
) -> Callable[[str], bool]:
    qa = next(
        q for q in conv.qa if q.question == case["question"] and q.answer == case["expected_answer"]
    )
    assert qa.evidence == (evidence,), "the case's evidence is not its LoCoMo question's"
    observations = [o.text for o in conv.observations if evidence in o.cites]
    phrase = answer_phrase(qa.question, qa.answer)
    return lambda text: any(o in text for o in observations) or holds(text, phrase)


def label_problems(
    item: LabelledBatch, conv: LocomoConversation, only: set[str] | None = None
) -> list[str]:
    """Every way a label (or a missing one) disagrees with the trace, for every case (or those in
    ``only``); [] when all follow."""
    trace = Trace(item.batch)
    problems = []
    for case in item.batch["cases"]:
        if only is not None and case["id"] not in only:
            continue
        carries = _carrier(conv, case, item.hidden["evidence"][case["id"]])
        response = next(o for o in trace.ops if case["answer_unit"] in o["outputs"])
        context = response["inputs"][1]
        retrieval = next(o for o in trace.ops if context in o["outputs"])
        if set(retrieval["inputs"][1:]) != trace.live:
            problems.append(f"{case['id']}: the search did not read the whole live store")
        live = any(carries(trace.content(u)) for u in trace.live)
        in_context = carries(trace.content(context))
        label = item.labels.get(case["id"])
        if (label is None) != (case["verdict"] == "passed"):
            problems.append(f"{case['id']}: verdict {case['verdict']} but label {label}")
        if label is None:
            if not in_context:
                problems.append(f"{case['id']}: passed without the answer in context")
            continue
        kind, op = label["error_type"], trace.op.get(label["operation_id"])
        if op is None:
            problems.append(f"{case['id']}: labelled operation not in the trace")
            continue
        carrying = {
            u for u, x in trace.units.items() if x["kind"] == "memory" and carries(x["content"])
        }
        held_carriers = {o: bool(held & carrying) for o, held in trace.held.items()}
        ever = bool(carrying)
        if kind == "ExtractionError":
            evidence_message = next(
                u
                for u, unit in trace.units.items()
                if (unit.get("attributes") or {}).get("dia_id")
                == item.hidden["evidence"][case["id"]]
            )
            if ever or op["kind"] != "extraction" or evidence_message not in op["inputs"]:
                problems.append(
                    f"{case['id']}: ExtractionError but a memory carried it, or wrong op"
                )
        elif kind in ("UpdateError", "DeletionError"):
            order = [o["id"] for o in trace.ops if o["id"] in held_carriers]
            at = order.index(op["id"]) if op["id"] in order else -1
            before = held_carriers[order[at - 1]] if at > 0 else False
            losses = [
                o
                for i, o in enumerate(order[1:], 1)
                if held_carriers[order[i - 1]] and not held_carriers[o]
            ]
            tomb = [u for u in op["outputs"] if trace.units[u]["kind"] == "tombstone"]
            consumed = [u for u in op["inputs"] if carries(trace.content(u))]
            produced = [u for u in op["outputs"] if carries(trace.content(u))]
            if live or not before or held_carriers[op["id"]] or not losses or losses[0] != op["id"]:
                problems.append(
                    f"{case['id']}: {kind} op is not the first loss of the last carrier"
                )
            if not consumed or produced:
                problems.append(f"{case['id']}: {kind} op neither read a carrier nor dropped it")
            if (kind == "DeletionError") != bool(tomb):
                problems.append(f"{case['id']}: {kind} but the op's tombstones are {tomb}")
            if kind == "DeletionError" and not any(
                trace.memory_id(u) == trace.memory_id(t) for u in consumed for t in tomb
            ):
                problems.append(f"{case['id']}: the tombstone is not of the carrier")
        elif kind == "RetrievalError":
            if not live or in_context or op is not retrieval:
                problems.append(
                    f"{case['id']}: RetrievalError but live {live}, context {in_context}"
                )
        elif kind == "ResponseError" and (not in_context or op is not response):
            problems.append(f"{case['id']}: ResponseError without the answer in context")
    return problems


def test_every_label_follows_from_the_trace(
    shapes: dict[str, list[LabelledBatch]], conversations: dict[str, LocomoConversation]
) -> None:
    for item in shapes["rewrite"]:
        assert label_problems(item, conversations[item.hidden["conversation"]]) == []


def test_every_error_type_is_built_and_every_failed_case_labelled(
    shapes: dict[str, list[LabelledBatch]],
) -> None:
    types = {label["error_type"] for item in shapes["rewrite"] for label in item.labels.values()}
    assert types == {
        "ExtractionError",
        "UpdateError",
        "DeletionError",
        "RetrievalError",
        "ResponseError",
    }
    for item in shapes["rewrite"]:
        failed = {c["id"] for c in item.batch["cases"] if c["verdict"] == "failed"}
        assert failed == set(item.labels)
        TraceBatch.model_validate(item.batch)
        assert all(not c["evidence_units"] for c in item.batch["cases"]), "hints leak into cases"


def test_the_split_is_fixed_disjoint_by_conversation_and_the_same_as_locomo(
    shapes: dict[str, list[LabelledBatch]],
) -> None:
    assert not set(TUNE) & set(HELDOUT)
    assert set(TUNE) | set(HELDOUT) == {f.stem for f in conversation_files()}
    assert (TUNE, HELDOUT) == (LOCOMO_TUNE, LOCOMO_HELDOUT)
    for item in (x for batches in shapes.values() for x in batches):
        assert item.hidden["conversation"] in (TUNE if item.hidden["half"] == "tune" else HELDOUT)


def test_the_shapes_name_what_they_say_and_share_projects(
    shapes: dict[str, list[LabelledBatch]],
) -> None:
    for shape, batches in shapes.items():
        projects = {item.batch["project"] for item in batches}
        assert len(projects) == (1 if "shared" in shape else len(SAMPLE)), shape
        for item in batches:
            names = [
                key
                for x in (*item.batch["units"], *item.batch["operations"])
                for key in (x.get("attributes") or {})
                if key in NAMING_ATTRIBUTES
            ] + [o["session_id"] for o in item.batch["operations"] if o.get("session_id")]
            assert bool(names) == (not shape.endswith("unnamed")), shape
    ids = [u["id"] for batches in shapes.values() for item in batches for u in item.batch["units"]]
    assert len(ids) == len(set(ids)), "shapes share ids: the oracle could not tell them apart"


def test_the_checker_catches_a_moved_label(
    shapes: dict[str, list[LabelledBatch]], conversations: dict[str, LocomoConversation]
) -> None:
    item = shapes["rewrite"][0]
    conv = conversations[item.hidden["conversation"]]
    ops = [o["id"] for o in item.batch["operations"]]
    for kind in (
        "ExtractionError",
        "UpdateError",
        "DeletionError",
        "RetrievalError",
        "ResponseError",
    ):
        case, label = next((c, x) for c, x in item.labels.items() if x["error_type"] == kind)
        earlier = ops[ops.index(label["operation_id"]) - 1]
        for wrong in (
            {**label, "operation_id": earlier},
            {
                **label,
                "error_type": "ResponseError" if kind != "ResponseError" else "RetrievalError",
            },
        ):
            moved = LabelledBatch(item.batch, {**item.labels, case: wrong}, item.hidden)  # type: ignore[dict-item]
            assert label_problems(moved, conv, {case}), f"a moved {kind} label went unnoticed"


def test_every_shape_carries_the_same_labels(shapes: dict[str, list[LabelledBatch]]) -> None:
    """Shapes differ in names and projects only: the same case gets the same label (by type and
    by the operation's place in its trace), so their figures compare."""

    def labels(batches: list[LabelledBatch]) -> list[tuple[str, str, int]]:
        out: list[tuple[str, str, int]] = []
        for item in batches:
            place = {o["id"]: i for i, o in enumerate(item.batch["operations"])}
            for case in item.batch["cases"]:
                label = item.labels.get(case["id"])
                if label is not None:
                    out.append(
                        (case["question"], label["error_type"], place[label["operation_id"]])
                    )
        return out

    first = labels(shapes["rewrite"])
    assert first and all(labels(batches) == first for batches in shapes.values())
