"""The million-operation benchmark's traces (``benchmarks.attribution million``): copies under
fresh ids, traces that name no conversation, user or session, whole-store searches.

No Neo4j, no service. The tests of the benchmark's own traces read LoCoMo (``../shared``
beside this checkout or the main one) and are skipped when it is not there.
"""

from __future__ import annotations

import argparse
from collections import Counter
from datetime import UTC, datetime
from typing import Any

import pytest

from benchmarks.attribution.million import PROJECT, Filler, Traces, locomo_dir, traces
from benchmarks.datasets.builder import BatchBuilder
from benchmarks.datasets.copies import (
    NAMING_ATTRIBUTES,
    copy_batch,
    grow,
    ids,
    named,
    truncated,
    unnamed,
)

LOCOMO = locomo_dir("../shared/data/locomo10")
needs_locomo = pytest.mark.skipif(not LOCOMO.is_dir(), reason="LoCoMo data not available")


def _small() -> dict[str, Any]:
    """A trace naming its conversation, user and session everywhere it can: two extractions,
    a whole-store retrieval, an answer and its case."""
    b = BatchBuilder("p", "t", datetime(2026, 1, 1, tzinfo=UTC), {"conversation_id": "conv-1"})
    said = b.unit("message", "Ann: I moved to Lisbon", user_id="ann", session=1)
    m1 = b.unit("memory", "Ann lives in Lisbon", memory_id="mem-1")
    b.op("extract", "extraction", "s", [said], [m1], session_id="sess-1", user_id="ann")
    m2 = b.unit("memory", "Ann likes tea", memory_id="mem-2")
    b.op("extract", "extraction", "s", [said], [m2], session_id="sess-1")
    query = b.unit("query", "Where does Ann live?")
    context = b.unit("context", "Ann lives in Lisbon")
    b.op("search", "retrieval", "s", [query, m1, m2], [context], session_id="sess-1")
    answer = b.unit("answer", "Porto")
    b.op("answer", "response", "s", [query, context], [answer], session_id="sess-1")
    b.case("Where does Ann live?", "Lisbon", answer, passed=False, evidence_units=[said])
    return b.build()


def _names(batch: dict[str, Any]) -> list[str]:
    """Every conversation, user or session a batch names."""
    found = [f"session_id={o['session_id']}" for o in batch["operations"] if o["session_id"]]
    for item in (*batch["operations"], *batch["units"]):
        found += [k for k in item.get("attributes") or {} if k in NAMING_ATTRIBUTES]
    return found


def _references(batch: dict[str, Any]) -> set[str]:
    refs = {u for o in batch["operations"] for u in (*o["inputs"], *o["outputs"])}
    for case in batch["cases"]:
        refs |= {case["answer_unit"], *case["evidence_units"]}
    return refs


def test_unnamed_strips_every_name_and_named_puts_a_conversation_on_every_operation() -> None:
    batch = _small()
    assert len(_names(batch)) >= 6  # the test can fail: the trace names all three
    assert _names(unnamed(batch)) == []
    assert _names(batch) != [], "unnamed must not change its argument"
    again = named(unnamed(batch), "c-9")
    assert {o["attributes"]["conversation_id"] for o in again["operations"]} == {"c-9"}


def test_copies_are_disjoint_in_ids_and_memory_ids_and_reference_only_their_own_units() -> None:
    batch = _small()
    copies = [batch, copy_batch(batch, "c1"), copy_batch(batch, "c2")]
    every = ids(copies)
    assert len(every) == len(set(every)) == 3 * len(ids([batch]))
    memory_ids = [u["attributes"].get("memory_id") for b in copies for u in b["units"]]
    assert len({m for m in memory_ids if m}) == 6
    for copied in copies[1:]:
        assert _references(copied) <= {u["id"] for u in copied["units"]}
        assert [u["content"] for u in copied["units"]] == [u["content"] for u in batch["units"]]
        assert [o["ts"] for o in copied["operations"]] == [o["ts"] for o in batch["operations"]]


def test_grow_hits_the_operation_count_exactly_and_a_cut_copy_stays_whole() -> None:
    batch = _small()
    grown = list(grow([batch], 0, 10))
    assert sum(len(b["operations"]) for _, b in grown) == 10
    assert [n for n, _ in grown] == [0, 1, 2]
    cut = grown[-1][1]
    assert len(cut["operations"]) == 2 and cut["cases"] == []  # the answer was cut off
    assert _references(cut) <= {u["id"] for u in cut["units"]}
    whole = truncated(batch, 4)
    assert len(whole["cases"]) == 1 and whole["units"] == batch["units"]


def _traces(**options: Any) -> Traces:
    defaults = {
        "locomo": str(LOCOMO),
        "fixed": "26",
        "cases": 30,
        "conversation_ids": False,
        "filler_search": "whole_store",
        "filler_cases": "as-traced",
    }
    return traces(argparse.Namespace(**{**defaults, **options}))


def _memories_before(ops: list[dict[str, Any]], kinds: dict[str, str]) -> list[set[str]]:
    """Per operation, the memories the operations before it wrote."""
    seen: set[str] = set()
    out = []
    for op in ops:
        out.append(set(seen))
        seen |= {u for u in op["outputs"] if kinds[u] == "memory"}
    return out


def _assert_whole_store(batch: dict[str, Any]) -> int:
    """Every retrieval consumes every memory written before it; how many retrievals."""
    kinds = {u["id"]: u["kind"] for u in batch["units"]}
    retrievals = 0
    ops = batch["operations"]
    for op, live in zip(ops, _memories_before(ops, kinds), strict=True):
        if op["kind"] == "retrieval":
            retrievals += 1
            assert {u for u in op["inputs"] if kinds[u] == "memory"} == live, op["id"]
    return retrievals


@needs_locomo
def test_the_benchmark_traces_name_nothing_and_their_searches_read_the_whole_store() -> None:
    found = _traces()
    assert len(found.cases) == 30
    fixed_cases = {c["id"] for b in found.fixed for c in b["cases"] if c["verdict"] == "failed"}
    assert set(found.cases) <= fixed_cases
    filler = Filler(found, 2000, conversation_ids=False)
    bodies = list(filler.bodies(5000))
    assert sum(len(b["operations"]) for b in bodies) == 5000
    every = [*found.fixed, *bodies]
    assert all(b["project"] == PROJECT for b in every)
    assert [n for b in every for n in _names(b)] == []
    repeated = [i for i, n in Counter(ids(every)).items() if n > 1]
    assert repeated == []
    memory_ids = [
        u["attributes"]["memory_id"]
        for b in every
        for u in b["units"]
        if "memory_id" in (u.get("attributes") or {})
    ]
    assert len(memory_ids) == len(set(memory_ids))
    assert sum(_assert_whole_store(b) for b in found.fixed) > 100
    by_copy: dict[str, dict[str, Any]] = {}
    for body in bodies:  # a body holds several copies: each copy is a store of its own
        for key in ("units", "operations", "cases"):
            for item in body[key]:
                copy = by_copy.setdefault(
                    item["id"].split("-", 1)[0], {"units": [], "operations": [], "cases": []}
                )
                copy[key].append(item)
    assert len(by_copy) >= 10
    assert sum(_assert_whole_store(c) for c in by_copy.values()) > 500
    more = list(filler.bodies(1000))  # the next size goes on from the next copy
    assert set(ids(more)).isdisjoint(ids(every))


@needs_locomo
def test_the_named_variant_gives_every_operation_the_conversation_of_its_copy() -> None:
    found = _traces(conversation_ids=True)
    bodies = list(Filler(found, 2000, conversation_ids=True).bodies(3000))
    ops = [o for b in [*found.fixed, *bodies] for o in b["operations"]]
    assert all(o["attributes"].get("conversation_id") for o in ops)
    by_prefix: dict[str, set[str]] = {}
    for op in ops:
        prefix = op["id"].split("-", 1)[0]
        by_prefix.setdefault(prefix, set()).add(op["attributes"]["conversation_id"])
    copies = {p: c for p, c in by_prefix.items() if p != "op"}
    assert all(len(c) == 1 for c in copies.values())
    assert len({next(iter(c)) for c in copies.values()}) == len(copies)
