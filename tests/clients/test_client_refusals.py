"""One refused record does not take its batch down: the service names what it refuses (409 for
an id that means something else, 422 for an invalid item), the client keeps those aside with
the reason, stores the rest, and ``flush()`` says what was refused."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memtrace_client import MemTraceClient, Tracer
from memtrace_client.refusals import split_refused
from neo4j import Driver

from tests.support.servers import ServiceHandle


def conflicting(part: str, record_id: str) -> dict[str, Any]:
    """One item of a 409's ``details``, as the service sends it."""
    return {"loc": [part, record_id], "msg": "already names something different"}


def stored_ids(driver: Driver, project: str) -> set[str]:
    records = driver.execute_query(
        "MATCH (n {project: $p}) WHERE n:Unit OR n:Operation OR n:Case RETURN n.id AS id",
        p=project,
    ).records
    return {r["id"] for r in records}


def test_a_clashing_unit_is_refused_alone(
    service: ServiceHandle, neo4j_driver: Driver, project: str, tmp_path: Path
) -> None:
    first = Tracer(MemTraceClient(service.url, project=project), spool_dir=tmp_path / "a")
    first.unit("memory", "Lives in Lisbon", id="x")
    assert first.flush(30)
    first.close()

    second = Tracer(MemTraceClient(service.url, project=project), spool_dir=tmp_path / "b")
    second.unit("memory", "Lives in Porto", id="x")  # redefines x: refused
    turn = second.message("I like green tea", id="msg-tea")
    with second.operation("extract", kind="extraction", inputs=[turn], id="op-tea") as op:
        op.output(second.memory("Likes green tea", id="mem-tea"))
    result = second.flush(30)
    second.close()

    assert result.settled and not result
    [rejection] = result.rejected
    assert rejection.reason.startswith("HTTP 409")
    assert rejection.records == {
        "project": project,
        "units": [result.rejected[0].records["units"][0]],
    }
    assert rejection.records["units"][0]["content"] == "Lives in Porto"
    assert {"msg-tea", "op-tea", "mem-tea", "x"} <= stored_ids(neo4j_driver, project)
    content = neo4j_driver.execute_query(
        "MATCH (u:Unit {project: $p, id: 'x'}) RETURN u.content AS c", p=project
    ).records[0]["c"]
    assert content == "Lives in Lisbon"
    kept = list((tmp_path / "b" / "rejected").glob("*.json"))
    assert len(kept) == 1 and "Lives in Porto" in kept[0].read_text()
    assert kept[0].with_suffix(".reason.txt").read_text().startswith("HTTP 409")
    assert second.delivery.stats.rejected_records == 1


def test_an_operation_defining_a_clashing_unit_inline_is_refused_with_it() -> None:
    batch = {
        "project": "p",
        "units": [{"id": "m", "kind": "message", "content": "hi"}],
        "operations": [
            {"id": "op-ok", "name": "a", "kind": "other", "inputs": ["m"]},
            {
                "id": "op-bad",
                "name": "b",
                "kind": "update",
                "outputs": [{"id": "x", "kind": "memory"}],
            },
        ],
    }
    conflict = {"error": "conflict", "message": "...", "details": [conflicting("units", "x")]}
    split = split_refused(batch, 409, conflict)
    assert split is not None
    rest, refused = split
    assert [o["id"] for o in rest["operations"]] == ["op-ok"] and rest["units"] == batch["units"]
    assert [o["id"] for o in refused["operations"]] == ["op-bad"]
    # Nothing in particular named, or everything: the batch is refused as a whole.
    assert split_refused(batch, 403, {"error": "forbidden", "details": None}) is None
    named = [("units", "m"), ("operations", "op-ok"), ("operations", "op-bad")]
    everything = {"details": [conflicting(part, record_id) for part, record_id in named]}
    assert split_refused(batch, 409, everything) is None
    # A service from before details became a list sent {"units": [...], ...}: still read.
    older = {"error": "conflict", "message": "...", "details": {"units": ["x"]}}
    assert split_refused(batch, 409, older) == split
    batch_level = {"details": [{"loc": ["body", "project"], "msg": "bad"}]}
    assert split_refused(batch, 422, batch_level) is None


def test_an_invalid_record_is_refused_alone(
    service: ServiceHandle, neo4j_driver: Driver, project: str, tmp_path: Path
) -> None:
    tracer = Tracer(MemTraceClient(service.url, project=project), spool_dir=tmp_path)
    tracer.message("kept", id="msg-kept")
    tracer.delivery.put("units", {"id": "bad", "kind": "no-such-kind", "content": "?"})
    tracer.record_operation("kept-op", kind="other", id="op-kept")
    result = tracer.flush(30)
    tracer.close()
    [rejection] = result.rejected
    assert rejection.reason.startswith("HTTP 422")
    assert rejection.records["units"] == [{"id": "bad", "kind": "no-such-kind", "content": "?"}]
    assert stored_ids(neo4j_driver, project) == {"msg-kept", "op-kept"}
