"""The careful reading of the store-rewriting set: what a reader is shown, and what a reading means.

A reader must see what a case needs and nothing of its label or of MemTrace's result; what the
view says the store did with each fact must be what the trace did; and the committed answers must
belong to the sample as it is drawn now. No network, no database; skipped when
../shared/data/locomo10 is not there.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from benchmarks.attribution import reread, reread_rewrite
from benchmarks.attribution.flatlog import batch_units
from benchmarks.datasets.locomo_source import resolve_dir
from benchmarks.datasets.rewrite import HALVES, HELDOUT, load_rewrite

pytestmark = pytest.mark.skipif(not resolve_dir(None).is_dir(), reason="LoCoMo data not available")

IDS = re.compile(r"\b(?:u|op)-[0-9a-f]{6}-\d+")
SHOWN = {
    "key",
    "question",
    "expected_answer",
    "evidence_turn",
    "evidence_said_at",
    "facts_extracted_from_that_session",
    "other_live_memories_best_matching",
    "context_given_to_the_answer_model",
}


@pytest.fixture(scope="module")
def heldout() -> list[Any]:
    return load_rewrite(shape="rewrite", conversations=HELDOUT)


def test_a_reader_sees_what_the_case_needs_and_nothing_of_its_label(heldout: list[Any]) -> None:
    cases = reread_rewrite.sample(heldout, 500, seed=1)
    assert len(cases) == sum(len(b.labels) for b in heldout)
    for case in cases:
        assert set(case) == SHOWN
        text = json.dumps(case)
        assert "Error" not in text and not IDS.search(text)


def test_what_the_view_says_the_store_did_is_what_the_trace_did(heldout: list[Any]) -> None:
    item = heldout[0]
    units = batch_units(item.batch)
    ops = item.batch["operations"]
    search = next(op for op in ops if op["kind"] == "retrieval")
    live = {u for u in search["inputs"] if units[u]["kind"] == "memory"}
    fates = {
        f: fate.text
        for f, fate in reread_rewrite._History(units, ops).fates(live, search["ts"]).items()
    }
    deleted = {
        (units[u].get("attributes") or {}).get("memory_id")
        for u in units
        if units[u]["kind"] == "tombstone" and units[u]["ts"] <= search["ts"]
    }
    kinds = {"unchanged": 0, "as": 0, "deleted": 0}
    for fact, fate in fates.items():
        decision = next(op for op in ops if op["kind"] == "update" and op["inputs"][0] == fact)
        made = [u for u in decision["outputs"] if units[u]["kind"] == "memory"]
        assert fate.startswith(decision["attributes"]["event"])
        if "live at question time as: " in fate:
            kinds["as"] += 1
            shown = fate.split("as: ", 1)[1]
            assert any(units[u]["content"] == shown for u in live)
        elif "unchanged" in fate:
            kinds["unchanged"] += 1
            assert units[fact]["content"] in {units[u]["content"] for u in live}
        elif "later deleted" in fate:
            kinds["deleted"] += 1
            assert (units[made[-1]].get("attributes") or {}).get("memory_id") in deleted
    assert all(kinds.values()), kinds  # the batch shows every fate, so each check ran


@pytest.mark.parametrize(
    ("answer", "strict", "lenient"),
    [
        ({"context": "yes", "live": "yes", "extracted": "yes"}, "ResponseError", "ResponseError"),
        ({"context": "no", "live": "yes", "extracted": "yes"}, "RetrievalError", "RetrievalError"),
        (
            {"context": "event-only", "live": "yes", "extracted": "yes"},
            "RetrievalError",
            "ResponseError",
        ),
        (
            {"context": "no", "live": "no", "extracted": "yes", "lost_by": "update"},
            "UpdateError",
            "UpdateError",
        ),
        (
            {"context": "no", "live": "no", "extracted": "event-only", "lost_by": "delete"},
            "ExtractionError",
            "DeletionError",
        ),
        ({"context": "no", "live": "no", "extracted": "no"}, "ExtractionError", "ExtractionError"),
    ],
)
def test_a_reading_gives_where_the_information_was_last_stated(
    answer: dict[str, str], strict: str, lenient: str
) -> None:
    assert reread_rewrite.read_type(answer, lenient=False) == strict
    assert reread_rewrite.read_type(answer, lenient=True) == lenient


@pytest.mark.parametrize("half", ["heldout", "tune"])
def test_the_committed_answers_are_for_the_sample_as_drawn(half: str) -> None:
    batches = load_rewrite(shape="rewrite", conversations=HALVES[half])
    drawn = [c["key"] for c in reread_rewrite.sample(batches, reread.SAMPLE, reread.SEED)]
    lines = reread.ANSWERS[("rewrite", half)].read_text().splitlines()
    answers = [json.loads(line) for line in lines]
    assert [a["key"] for a in answers] == drawn
    for a in answers:
        assert {a["context"], a["live"], a["extracted"]} <= {"yes", "no", "event-only"}
        assert a.get("lost_by", "update") in {"update", "delete"}
