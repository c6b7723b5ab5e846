"""The attribution graph's lookups against their definitions, on graphs built in memory.

``CaseGraph`` indexes the readers of a unit that build the memory when reads are added and looks
up the question-time readers (retrievals, responses) only when asked; it keeps ``ancestors_of``
until an operation is added. These tests hold the lookups to what the rows say, before and after
more reads arrive (reads decoded for one graph, or shared by several as a job's cases share
them), hold a row's decoding to the row field by field, and hold the scope's canonical attribute
values apart by type.
"""

from __future__ import annotations

import dataclasses
import json
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest

from benchmarks.attribution.invariance import differences, fail_loudly, failures
from service.attribution.graph import CaseGraph, Node, NodeRead
from service.attribution.rows import node_read, scope_message
from service.attribution.scope import scope_of

T0 = datetime(2024, 5, 1, tzinfo=UTC)


def _unit(uid: str, kind: str = "memory", **attributes: Any) -> dict[str, Any]:
    return {
        "id": uid,
        "kind": kind,
        "name": None,
        "content": uid,
        "ts": T0,
        "attributes": json.dumps(attributes) if attributes else None,
        "is_operation": False,
        "edges": [],
    }


def _op(
    oid: str, kind: str, ins: list[str], outs: list[str], minute: int, **attributes: Any
) -> dict[str, Any]:
    return {
        "id": oid,
        "kind": kind,
        "name": oid,
        "content": None,
        "ts": T0.replace(minute=minute),
        "attributes": json.dumps(attributes) if attributes else None,
        "is_operation": True,
        "edges": [["CONSUMES", u, i] for i, u in enumerate(ins)]
        + [["PRODUCES", u, i] for i, u in enumerate(outs)],
    }


def _whole_store() -> list[dict[str, Any]]:
    """Two messages extracted into memories; two questions, each retrieval reading every
    memory (the whole store) and the question message too."""
    return [
        _unit("m1", "message"),
        _unit("m2", "message"),
        _unit("x1"),
        _unit("x2"),
        _unit("q1", "message"),
        _unit("q2", "message"),
        _unit("c1", "context"),
        _unit("c2", "context"),
        _unit("a1", "answer"),
        _unit("a2", "answer"),
        _op("ext-1", "extraction", ["m1"], ["x1"], 1),
        _op("ret-1", "retrieval", ["q1", "x1", "x2"], ["c1"], 2),
        _op("ext-2", "extraction", ["m2", "x1"], ["x2"], 3),
        _op("res-1", "response", ["q1", "c1"], ["a1"], 4),
        _op("ret-2", "retrieval", ["q2", "x1", "x2"], ["c2"], 5),
        _op("res-2", "response", ["q2", "c2"], ["a2"], 6),
    ]


def _readers(rows: list[dict[str, Any]], unit: str) -> list[str]:
    """Every operation among ``rows`` that consumed ``unit``, in row order: the definition."""
    return [
        r["id"]
        for r in rows
        if r["is_operation"] and any(t == "CONSUMES" and u == unit for t, u, _ in r["edges"])
    ]


def _reads(rows: list[dict[str, Any]]) -> list[NodeRead]:
    return [node_read(r) for r in rows]


@pytest.mark.parametrize("shared", [False, True], ids=["own reads", "shared reads"])
def test_consumers_are_every_reader_in_the_order_added(shared: bool) -> None:
    rows = _whole_store()
    first, later = rows[:-2], rows[-2:]  # the second question arrives later
    reads = _reads(rows)
    other = CaseGraph()
    if shared:  # another case's graph took every one of the same reads first
        other.add(reads)
    graph = CaseGraph()
    graph.add(reads[:-2] if shared else _reads(first))
    units = [r["id"] for r in rows if not r["is_operation"]]
    assert {u: graph.consumers_of(u) for u in units} == {u: _readers(first, u) for u in units}
    assert graph.consumers_of("x1") == ["ret-1", "ext-2"]  # a builder after a reader
    assert graph.building_consumers("x1") == ["ext-2"]
    assert graph.building_consumers("q1") == []

    graph.add(reads[-2:] if shared else _reads(later))
    assert {u: graph.consumers_of(u) for u in units} == {u: _readers(rows, u) for u in units}
    assert graph.consumers_of("x2") == ["ret-1", "ret-2"]
    if shared:  # neither graph changed what the other holds
        assert {u: other.consumers_of(u) for u in units} == {u: _readers(rows, u) for u in units}
        assert graph.inputs == other.inputs and graph.outputs == other.outputs
        assert all(graph.units[u] is other.units[u] for u in units)


def test_ancestors_of_sees_an_operation_added_after_it_was_asked() -> None:
    rows = _whole_store()
    graph = CaseGraph()
    graph.add(_reads([r for r in rows if r["id"] != "ext-2"]))
    assert graph.ancestors_of("a2") == {"res-2", "ret-2", "ext-1"}  # x2 made by nothing known
    graph.add(_reads([r for r in rows if r["id"] == "ext-2"]))
    assert graph.ancestors_of("a2") == {"res-2", "ret-2", "ext-1", "ext-2"}


def test_a_row_is_decoded_field_by_field() -> None:
    """An operation's edges in position order whatever order they came in, its attributes'
    JSON, its memory entry and its time as the three integers the queries project."""
    row = {
        "id": "upd",
        "kind": "update",
        "name": "update memory",
        "content": None,
        "system": "mem0",
        "session_id": "s1",
        "attributes": json.dumps({"memory_id": 7, "caption": "a dog"}),
        "defined": True,
        "ts": [1_714_554_000, 123_456_789, 7200],  # 2024-05-01T11:00:00.123456789+02:00
        "is_operation": True,
        "edges": [
            ["PRODUCES", "v2", 1],
            ["CONSUMES", "b", 2],
            ["PRODUCES", "v1", 0],
            ["CONSUMES", "a", 0],
            ["CONSUMES", "c", 1],
        ],
    }
    read = node_read(row)
    when = datetime(2024, 5, 1, 11, 0, 0, 123456, tzinfo=timezone(timedelta(hours=2)))
    assert (read.inputs, read.outputs) == (("a", "c", "b"), ("v1", "v2"))
    node = read.node
    assert node == Node("upd", True, "update", "update memory", "", when, "7", "mem0", "s1")
    assert node.ts is not None and node.ts.utcoffset() == timedelta(hours=2)
    assert node.attributes == {"memory_id": 7, "caption": "a dog"}
    with pytest.raises(dataclasses.FrozenInstanceError):
        read.inputs = ()  # type: ignore[misc]
    # a unit: no edges, defaults for what its row leaves out, naive times taken as UTC
    unit = node_read(
        {"id": "m", "kind": None, "ts": datetime(2024, 5, 1), "is_operation": False, "edges": []}
    )
    assert unit == NodeRead(Node("m", False, "other", "", "", T0, None))
    # a scope's message: its node, and its recorded instant to the nanosecond
    message = scope_message({**row, "is_operation": False, "edges": []})
    assert message.recorded == 1_714_554_000_123_456_789
    assert message.node.ts == when and not message.node.is_operation


def test_source_messages_of_the_lineage_count_question_time_readers() -> None:
    """m1 and m2 are read by extractions (sources); q2 only by a retrieval and the response
    (the answering call's own message: no source)."""
    graph = CaseGraph()
    graph.add(_reads(_whole_store()))
    assert scope_of(graph, "a2", "res-2").lineage == ("m1", "m2")


@pytest.mark.parametrize("value", [1, 1.0, True, "1"])
def test_scope_values_keep_their_json_type(value: Any) -> None:
    """A conversation named 1, 1.0, true or "1" is four different scopes, however often the
    values were seen before (the canonical JSON of a value is cached)."""

    def named(conversation: Any) -> tuple[tuple[str, str], ...]:
        graph = CaseGraph()
        answering = _op("res", "response", ["m"], ["a"], 1, conversation_id=conversation)
        graph.add(_reads([_unit("m", "message"), _unit("a", "answer"), answering]))
        return scope_of(graph, "a", "res").attributes

    for other in (1, 1.0, True, "1"):  # every value seen first
        named(other)
    kept = value if isinstance(value, str) else "json:" + json.dumps(value)
    assert named(value) == (("conversation_id", kept),)


def test_a_benchmark_fails_loudly_when_results_differ() -> None:
    before = {"p/c1": {"status": "attributed", "cost": {"seconds": 1.0}, "created_at": "x"}}
    timing_only = {"p/c1": {"status": "attributed", "cost": {"seconds": 2.0}, "created_at": "y"}}
    changed = {"p/c1": {"status": "inconclusive", "cost": {"seconds": 1.0}}}
    fail_loudly(failures("same", differences(before, timing_only)))  # returns: nothing differs
    assert failures("changed", differences(before, changed))
    assert failures("missing", differences(before, {}))
    with pytest.raises(SystemExit) as ended:
        fail_loudly(failures("changed", differences(before, changed)))
    assert ended.value.code == 1
