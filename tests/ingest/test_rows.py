"""Flattening batches into writer rows (no database needed)."""

from __future__ import annotations

from memtrace_client.models import TraceBatch, UnitIn

from ingest.rows import batch_rows, fingerprint, unit_row


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
