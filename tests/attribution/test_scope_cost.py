"""A case's scope costs the same whatever else its project holds (issue 34).

For each way a trace can name its scope (a conversation, a user, a session, or nothing at all,
as most SDK and OpenTelemetry traces), the service's own scope statements are run under PROFILE
on one conversation alone and next to ten others named the same way: the same messages come
back for the same database hits, and no plan reads a label or an index whole. Over HTTP, an
unnamed case gives the same result alone and beside twenty copies, and its scope reaches a
memory that was deleted before the question (the evidence of a DeletionError).
"""

from __future__ import annotations

import re
import uuid
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
from neo4j import Driver

from cypher import query
from service.attribution.scope import NEIGHBOURHOOD_KINDS, NEIGHBOURHOOD_STEPS, RECENT_OPERATIONS
from tests.support.attribution import stable_results

DAY = "2023-05-08"
SCANS = ("AllNodesScan", "NodeByLabelScan", "NodeIndexScan", "NodeIndexContainsScan")
CASES = ["a-case1", "a-case2"]
NAMINGS = ("nothing", "conversation", "user", "session")
UNTIL = datetime(2023, 5, 8, 12, 0, 5, tzinfo=UTC)  # the first answer's time


def _names(naming: str, who: str) -> dict[str, Any]:
    """What an operation of ``who``'s conversation carries under one way of naming."""
    if naming == "conversation":
        return {"attributes": {"conversation_id": f"conv-{who}"}}
    if naming == "user":
        return {"attributes": {"user_id": f"user-{who}"}}
    if naming == "session":
        return {"session_id": f"session-{who}"}
    return {}


def _op(
    oid: str, kind: str, ts: str, inputs: list[Any], outputs: list[Any], names: dict[str, Any]
) -> dict[str, Any]:
    op = {"id": oid, "name": f"demo.{kind}", "kind": kind, "system": "demo", "ts": ts}
    return {**op, "inputs": inputs, "outputs": outputs, **names}


def _unit(uid: str, kind: str, text: str, ts: str | None = None, **attributes: Any) -> dict:
    unit = {"id": uid, "kind": kind, "content": text, "attributes": attributes}
    return {**unit, "ts": ts} if ts else unit


def conversation(p: str, naming: str, who: str) -> dict[str, Any]:
    """Alice's memory: the sister's city is lost at extraction (x1); the cat's name is stored
    (x2), then deleted by an update deciding over similar memories (d1); the question-time
    search reads the whole store that is left (f1, f2). No case names its evidence."""
    names = _names(naming, who)
    t = f"{DAY}T10:00:0"
    units = [
        _unit(f"{p}m1", "message", "Alice: My sister Emma lives in Denver.", f"{t}0Z"),
        _unit(f"{p}m2", "message", "Alice: I work as a nurse at the hospital.", f"{t}1Z"),
        _unit(f"{p}m3", "message", "Alice: The weather was lovely today.", f"{t}2Z"),
        _unit(f"{p}m4", "message", "Alice: My cat is called Tom.", f"{t}3Z"),
    ]
    f1 = _unit(f"{p}f1", "memory", "Alice has a sister", memory_id=f"{p}sister")
    f2 = _unit(f"{p}f2", "memory", "Alice works as a nurse", memory_id=f"{p}job")
    f3 = _unit(f"{p}f3", "memory", "Alice's cat is called Tom", memory_id=f"{p}cat")
    tomb = _unit(f"{p}t3", "tombstone", "", memory_id=f"{p}cat")
    ops = [
        _op(f"{p}x1", "extraction", f"{t}4Z", [f"{p}m1", f"{p}m2", f"{p}m3"], [f1, f2], names),
        _op(f"{p}x2", "extraction", f"{t}5Z", [f"{p}m4"], [f3], names),
        _op(f"{p}d1", "update", f"{t}6Z", [f"{p}f3", f"{p}f2"], [tomb], names),
    ]
    cases = []
    questions = [
        ("Where does Alice's sister live?", "Denver"),
        ("What is Alice's cat called?", "Tom"),
    ]
    for n, (question, expected) in enumerate(questions, start=1):
        q = _unit(f"{p}q{n}", "query", question)
        ctx = _unit(f"{p}c{n}", "context", "Alice has a sister. Alice works as a nurse.")
        ask = f"{DAY}T12:00:0{2 * n}Z"
        ops.append(_op(f"{p}r{n}", "retrieval", ask, [q, f"{p}f1", f"{p}f2"], [ctx], names))
        answer = _unit(f"{p}a{n}", "answer", "I don't know")
        ops.append(_op(f"{p}s{n}", "response", ask, [f"{p}q{n}", f"{p}c{n}"], [answer], names))
        cases.append(
            {
                "id": f"{p}case{n}",
                "question": question,
                "expected_answer": expected,
                "answer_unit": f"{p}a{n}",
                "verdict": "failed",
            }
        )
    return {"units": units, "operations": ops, "cases": cases}


def _send(client: httpx.Client, project: str, batch: dict[str, Any]) -> None:
    response = client.post("/traces", json={"project": project, **batch})
    assert response.status_code == 200, response.text


def _plans(profile: dict[str, Any]) -> list[str]:
    """The plan's operators, named without their runtime suffix (``NodeByLabelScan@neo4j``)."""
    name = re.split(r"[@(]", profile["operatorType"])[0]
    return [name, *(t for c in profile.get("children", []) for t in _plans(c))]


def _hits(profile: dict[str, Any]) -> int:
    return int(profile.get("dbHits", 0)) + sum(_hits(c) for c in profile.get("children", []))


def _profiled(driver: Driver, name: str, **params: Any) -> tuple[Any, int, list[str]]:
    """The statement's one record, its database hits and its operators, under PROFILE."""
    with driver.session() as session:
        result = session.run("PROFILE " + query(name), **params)
        record = result.single()
        profile = result.consume().profile
    assert profile is not None
    return record, _hits(profile), _plans(profile)


def _scope_read(driver: Driver, project: str, naming: str) -> tuple[list[str], int, list[str]]:
    """What the service reads for Alice's first case, as ``scope_repository`` reads it: the
    neighbourhood steps of an unnamed scope, then ``scope_messages``."""
    named = {"conversations": [], "users": [], "sessions": []}
    hits, plans, messages = 0, [], []
    if naming == "nothing":
        seen = {"a-f1", "a-f2", "a-m1", "a-m2", "a-m3"}  # the lineage's units of those kinds
        frontier, found = sorted(seen), set()
        for _ in range(NEIGHBOURHOOD_STEPS):
            record, h, p = _profiled(
                driver, "attribution/neighbourhood", project=project, ids=frontier, systems=["demo"]
            )
            hits, plans = hits + h, plans + p
            new = sorted(row for row in record["units"] if row[0] not in seen)
            seen.update(row[0] for row in new)
            found.update(uid for uid, kind in new if kind == "message")
            frontier = [uid for uid, kind in new if kind in NEIGHBOURHOOD_KINDS]
        messages = sorted(found)
    else:
        key = {"conversation": "conversations", "user": "users", "session": "sessions"}[naming]
        named[key] = [
            {"conversation": "conv", "user": "user", "session": "session"}[naming] + "-alice"
        ]
    record, h, p = _profiled(
        driver,
        "attribution/scope_messages",
        project=project,
        systems=["demo"],
        messages=messages,
        until=UNTIL,
        limit=20_000,
        **named,
    )
    return sorted(n["id"] for n in record["nodes"]), hits + h, plans + p


@pytest.mark.parametrize("naming", NAMINGS)
def test_a_scope_read_costs_the_same_beside_ten_times_more(
    client: httpx.Client, neo4j_driver: Driver, naming: str
) -> None:
    alone, crowded = (f"t-scope-{uuid.uuid4().hex[:8]}" for _ in range(2))
    _send(client, alone, conversation("a-", naming, "alice"))
    _send(client, crowded, conversation("a-", naming, "alice"))
    for i in range(10):
        _send(client, crowded, conversation(f"o{i}-", naming, f"other{i}"))
    messages, hits, plans = _scope_read(neo4j_driver, alone, naming)
    crowded_messages, crowded_hits, crowded_plans = _scope_read(neo4j_driver, crowded, naming)
    assert messages == crowded_messages
    assert messages == (["a-m4"] if naming == "nothing" else ["a-m1", "a-m2", "a-m3", "a-m4"])
    assert crowded_hits <= 1.1 * hits, (hits, crowded_hits)
    assert not [p for p in plans + crowded_plans if p in SCANS], crowded_plans


def _store(p: str, store: str) -> dict[str, Any]:
    """A store's writes: an entry written, rewritten, and another deleted before ``UNTIL``; one
    more written after it."""
    t = f"{DAY}T1"
    v1 = _unit(f"{p}v1", "memory", "Alice has a sister", memory_id=f"{p}e1", store_id=store)
    v2 = _unit(f"{p}v2", "memory", "Alice's sister Emma", memory_id=f"{p}e1", store_id=store)
    v3 = _unit(f"{p}v3", "memory", "Alice has a cat", memory_id=f"{p}e2", store_id=store)
    gone = _unit(f"{p}t3", "tombstone", "", memory_id=f"{p}e2", store_id=store)
    late = _unit(f"{p}v4", "memory", "Alice moved", memory_id=f"{p}e3", store_id=store)
    ops = [
        _op(f"{p}w1", "update", f"{t}0:00:00Z", [], [v1, v3], {}),
        _op(f"{p}w2", "update", f"{t}0:00:01Z", [f"{p}v1"], [v2], {}),
        _op(f"{p}w3", "deletion", f"{t}0:00:02Z", [f"{p}v3"], [gone], {}),
        _op(f"{p}w4", "update", f"{t}3:00:00Z", [], [late], {}),
    ]
    return {"units": [], "operations": ops, "cases": []}


def test_a_stores_writes_are_read_by_its_index_beside_ten_other_stores(
    client: httpx.Client, neo4j_driver: Driver
) -> None:
    """``store_write_ids`` (the redundancy check's read of the stores a case names): the store's
    versions and tombstones written by the answer's time with their writers, latest first, for
    the same database hits beside ten other stores, and no label or index scan."""
    alone, crowded = (f"t-store-{uuid.uuid4().hex[:8]}" for _ in range(2))
    _send(client, alone, _store("a-", "alice"))
    _send(client, crowded, _store("a-", "alice"))
    for i in range(10):
        _send(client, crowded, _store(f"o{i}-", f"other{i}"))
    reads = []
    for project in (alone, crowded):
        record, hits, plans = _profiled(
            neo4j_driver,
            "attribution/store_write_ids",
            project=project,
            stores=["alice"],
            until=UNTIL,
            limit=100,
        )
        assert not [p for p in plans if p in SCANS], plans
        reads.append((record["nodes"], hits))
    (nodes, hits), (crowded_nodes, crowded_hits) = reads
    assert nodes == crowded_nodes
    assert [n[0] for n in nodes] == ["a-w3", "a-w2", "a-w1", "a-t3", "a-v2", "a-v1", "a-v3"]
    assert crowded_hits <= 1.1 * hits, (hits, crowded_hits)


def test_the_last_resort_reads_a_window_not_the_project(neo4j_driver: Driver) -> None:
    """``recent_messages`` walks the (project, ts) index backwards: no label or index scan."""
    _, _, plans = _profiled(
        neo4j_driver,
        "attribution/recent_messages",
        project="t-scope-none",
        systems=[],
        until=UNTIL,
        window=RECENT_OPERATIONS,
    )
    assert not [p for p in plans if p in SCANS], plans
    # the check itself sees a scan where there is one
    with neo4j_driver.session() as session:
        result = session.run("PROFILE MATCH (u:Unit) WHERE u.content = $c RETURN count(u)", c="-")
        result.consume()
        control = result.consume().profile
    assert control is not None and "NodeByLabelScan" in _plans(control)


def test_an_unnamed_case_is_the_same_beside_twenty_copies_and_finds_a_deleted_memory(
    client: httpx.Client,
) -> None:
    alone, crowded = (f"t-scope-{uuid.uuid4().hex[:8]}" for _ in range(2))
    _send(client, alone, conversation("a-", "nothing", "alice"))
    _send(client, crowded, conversation("a-", "nothing", "alice"))
    for i in range(20):
        _send(client, crowded, conversation(f"o{i}-", "nothing", f"other{i}"))
    results = stable_results(client, alone, CASES)
    assert [(r["error_type"], r["operation"]["id"]) for r in results] == [
        ("ExtractionError", "a-x1"),
        ("DeletionError", "a-d1"),
    ]
    assert all(r["searched"]["scope"] == "lineage" for r in results)
    assert all(not r["searched"]["scope_cut"] for r in results)
    assert stable_results(client, crowded, CASES) == results


def test_a_case_linked_to_no_message_searches_the_recent_window(client: httpx.Client) -> None:
    """A search whose records nothing wrote (as an OpenInference retriever naming no store):
    the scope says it fell back to the project's latest building operations."""
    project = f"t-scope-{uuid.uuid4().hex[:8]}"
    batch = conversation("a-", "nothing", "alice")
    for op in batch["operations"]:
        if op["kind"] == "retrieval":
            op["inputs"] = [
                op["inputs"][0],
                _unit(f"{op['id']}-rec", "memory", "Alice has a sister"),
            ]
    _send(client, project, batch)
    result = stable_results(client, project, CASES)[0]
    assert result["searched"]["scope"] == "recent"
    assert (result["error_type"], result["operation"]["id"]) == ("ExtractionError", "a-x1")
