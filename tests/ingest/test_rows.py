"""Flattening batches into writer rows (no database needed)."""

from __future__ import annotations

from memtrace_client.models import TraceBatch, UnitIn

from graph_schema import scope_value
from ingest.rows import batch_rows, fingerprint, split_rows, unit_row


def test_fingerprint_ignores_attribute_key_order() -> None:
    a = unit_row(UnitIn(id="u", kind="memory", content="c", attributes={"a": 1, "b": [1, 2]}))
    b = unit_row(UnitIn(id="u", kind="memory", content="c", attributes={"b": [1, 2], "a": 1}))
    c = unit_row(UnitIn(id="u", kind="memory", content="c", attributes={"a": 2, "b": [1, 2]}))
    assert a["fp"] == b["fp"] != c["fp"]
    assert fingerprint("x", None) != fingerprint("x", "None")


def test_inline_and_listed_definitions_collapse_when_identical() -> None:
    unit = {"id": "u", "kind": "memory", "content": "c"}
    batch = TraceBatch.model_validate(
        {
            "units": [unit],
            "operations": [
                {
                    "id": "o",
                    "name": "n",
                    "kind": "update",
                    "ts": "2026-01-01T00:00:00",
                    "inputs": ["m", unit],
                    "outputs": [unit],
                }
            ],
        }
    )
    rows = batch_rows(batch)
    assert list(rows.units) == ["u"]
    assert rows.referenced_only() == ["m"]
    assert rows.operations["o"]["inputs"] == [
        {"unit": "m", "position": 0},
        {"unit": "u", "position": 1},
    ]
    assert not rows.has_conflicts


def test_naive_timestamps_are_utc() -> None:
    batch = TraceBatch.model_validate(
        {
            "operations": [{"id": "o", "name": "n", "kind": "other", "ts": "2026-01-01T10:00:00"}],
        }
    )
    assert batch.operations[0].ts.utcoffset().total_seconds() == 0  # type: ignore[union-attr]


def test_a_heavy_batch_splits_into_parts_that_define_each_unit_before_naming_it() -> None:
    ops = [
        {
            "id": f"o{i}",
            "name": "n",
            "kind": "update",
            "ts": "2026-01-01T00:00:00",
            "inputs": ["shared", "ref-only", *([f"m{i - 1}"] if i else [])],
            "outputs": [{"id": f"m{i}", "kind": "memory", "content": "x" * 3000}],
        }
        for i in range(12)
    ]
    batch = TraceBatch.model_validate(
        {
            "units": [
                {"id": "shared", "kind": "message", "content": "s"},
                {"id": "unnamed", "kind": "message", "content": "u"},
            ],
            "operations": ops,
            "cases": [
                {
                    "id": "c",
                    "question": "q",
                    "expected_answer": "a",
                    "answer_unit": "m11",
                    "evidence_units": ["shared"],
                }
            ],
        }
    )
    rows = batch_rows(batch)
    parts = split_rows(rows, 20)
    assert split_rows(rows, 10_000) == [rows]
    assert len(parts) > 2
    # Every item once, in order: operations, then cases, then what nothing names.
    assert [op for part in parts for op in part.operations] == [f"o{i}" for i in range(12)]
    assert [c for part in parts for c in part.cases] == ["c"]
    assert "unnamed" in parts[-1].units
    defined = [uid for part in parts for uid in part.units]
    assert sorted(defined) == sorted(rows.units)
    # Each part names only units stored before it, defined in it, or never defined.
    seen: set[str] = set()
    for part in parts:
        seen |= part.units.keys()
        assert part.unit_refs - seen <= {"ref-only"}
        assert not part.has_conflicts
    # One operation weighs 1 + 4 edges + 3 KiB of text (its memory: 1 + 2), the first one
    # also the shared message: at most three a part.
    assert max(len(part.operations) for part in parts) <= 3


def test_scope_names_are_kept_as_properties_an_index_can_hold() -> None:
    """conversation_id, user_id and store_id repeat the attributes (graph_schema/scope_names):
    a string as it is, any other value as tagged JSON, a value too long to index as a digest."""
    row = unit_row(
        UnitIn(
            id="u",
            kind="memory",
            content="c",
            attributes={"conversation_id": "c-1", "user_id": 7, "store_id": "s" * 300},
        )
    )
    assert row["conversation_id"] == "c-1" and row["user_id"] == "json:7"
    assert row["store_id"].startswith("sha256:") and len(row["store_id"]) < 100
    assert unit_row(UnitIn(id="v", kind="memory", content="c"))["conversation_id"] is None
    assert scope_value("\ud800") is not None and scope_value("\ud800").startswith("sha256:")
