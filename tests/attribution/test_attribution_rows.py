"""A job reads each node of its project once (``service/attribution/row_cache.py``): where every
retrieval consumes the whole store, a conversation's cases share almost all of their graphs.
The reads a case gets are the ones the per-case read gives, field by field, and a job's results
are the per-request ones."""

from __future__ import annotations

import asyncio
from dataclasses import asdict
from typing import Any

import httpx
from neo4j import AsyncGraphDatabase

from service.attribution import repository as attributions
from service.attribution.graph import NodeRead
from service.attribution.row_cache import RowCache
from tests.attribution.test_attribution_reads import _job_results
from tests.attribution.test_attribution_scope import DAY, _msg, _op, _send, _unit
from tests.support.attribution import stable_results
from tests.support.servers import Neo4jHandle

LIMIT = 10_000


def whole_store(p: str) -> dict[str, Any]:
    """Two sessions extracted into memory entries (one updated), then three questions whose
    retrievals each consume every memory live at question time. The first extraction also
    read a note known by id only (``p-note``), which a later batch defines."""
    t = f"{DAY}T10:00:"
    units = [
        _msg(f"{p}m1", "Alice: My sister Emma lives in Denver.", f"{t}00Z"),
        _msg(f"{p}m2", "Alice: I work as a nurse at the children's hospital.", f"{t}01Z"),
        _msg(f"{p}m3", "Alice: I moved to the night shift last week.", f"{t}10Z"),
        _msg(f"{p}m4", "Alice: I adopted a beagle named Max.", f"{t}11Z"),
    ]
    ops = [
        _op(
            f"{p}x1",
            "extraction",
            f"{t}02Z",
            [f"{p}m1", f"{p}m2", f"{p}note"],
            [
                _unit(f"{p}f1", "memory", "Alice has a sister", memory_id=f"{p}sister"),
                _unit(f"{p}f2", "memory", "Works as a nurse", memory_id=f"{p}job"),
            ],
            user_id="alice",
        ),
        _op(
            f"{p}x2",
            "extraction",
            f"{t}12Z",
            [f"{p}m3", f"{p}m4"],
            [
                _unit(f"{p}f3", "memory", "Alice has a beagle", memory_id=f"{p}pet"),
                _unit(f"{p}f4", "memory", "Night shift nurse", memory_id=f"{p}job"),
            ],
            user_id="alice",
        ),
    ]
    store = [f"{p}f1", f"{p}f3", f"{p}f4"]  # f2 was replaced by f4
    cases = []
    questions = [
        ("Where does Alice's sister live?", "Denver", "I don't know"),
        ("What is Alice's dog called?", "Max", "Rex"),
        ("Which shift does Alice work?", "the night shift", "the day shift"),
    ]
    for n, (question, expected, wrong) in enumerate(questions, start=1):
        ops.append(
            _op(
                f"{p}r{n}",
                "retrieval",
                f"{DAY}T12:00:{10 * n:02d}Z",
                [_unit(f"{p}q{n}", "query", question), *store],
                [_unit(f"{p}c{n}", "context", "Alice has a beagle\nNight shift nurse")],
                user_id="alice",
            )
        )
        ops.append(
            _op(
                f"{p}a{n}",
                "response",
                f"{DAY}T12:00:{10 * n + 1:02d}Z",
                [f"{p}q{n}", f"{p}c{n}"],
                [_unit(f"{p}ans{n}", "answer", wrong)],
                user_id="alice",
            )
        )
        cases.append(
            {
                "id": f"{p}case{n}",
                "question": question,
                "expected_answer": expected,
                "answer_unit": f"{p}ans{n}",
                "verdict": "failed",
                "evidence_units": [f"{p}m4"] if n == 2 else [],
            }
        )
    return {"units": units, "operations": ops, "cases": cases}


def _fields(reads: list[NodeRead]) -> list[dict[str, Any]]:
    """Every field of some reads, their nodes' too (a node's equality leaves its attributes
    out)."""
    return [asdict(r) for r in reads]


def _read(neo4j: Neo4jHandle, project: str, cases: list[str], cache: RowCache | None) -> Any:
    async def go() -> Any:
        auth = (neo4j.user, neo4j.password)
        async with (
            AsyncGraphDatabase.driver(neo4j.uri, auth=auth) as driver,
            driver.session() as session,
        ):
            return await attributions.case_graphs(session, project, cases, LIMIT, cache)

    return asyncio.run(go())


def test_rows_through_the_cache_are_the_per_case_rows_read_once(
    client: httpx.Client, neo4j: Neo4jHandle, project: str
) -> None:
    _send(client, project, whole_store("w-"))
    cases = ["w-case1", "w-case2", "w-case3"]
    cache = RowCache()
    cached = _read(neo4j, project, cases, cache)
    plain = _read(neo4j, project, cases, None)
    for case in cases:
        assert _fields(cached[case].ancestors) == _fields(plain[case].ancestors)
        assert _fields(cached[case].derived) == _fields(plain[case].derived)
    assert plain["w-case2"].derived  # the case names its evidence: its descendants were read
    # the memories and everything they rest on were read for the first case, taken by the others
    first = {r.node.id: r for r in cached["w-case1"].ancestors}
    shared = [
        r for r in cached["w-case3"].ancestors if r.node.id in first and r.node.id != "w-note"
    ]
    assert {r.node.id for r in shared} >= {"w-f1", "w-f3", "w-f4", "w-x1", "w-x2", "w-m1"}
    assert all(r is first[r.node.id] for r in shared)
    # a unit known by id only is never kept: once defined, the next read has its content
    assert (False, "w-note") not in cache.reads
    _send(client, project, {"units": [_msg("w-note", "Alice: Note to self.", f"{DAY}T09:00:00Z")]})
    again = _read(neo4j, project, ["w-case1"], cache)
    note = next(r for r in again["w-case1"].ancestors if r.node.id == "w-note")
    assert note.node.content == "Alice: Note to self."
    assert _fields(again["w-case1"].ancestors) == _fields(
        _read(neo4j, project, ["w-case1"], None)["w-case1"].ancestors
    )


def test_a_job_on_a_whole_store_trace_gets_the_per_request_results(
    client: httpx.Client, project: str
) -> None:
    _send(client, project, whole_store("a-"), whole_store("b-"))
    cases = [f"{p}case{n}" for p in ("a-", "b-") for n in (1, 2, 3)]
    by_job = _job_results(client, project)
    one_by_one = dict(zip(cases, stable_results(client, project, cases), strict=True))
    assert sorted(by_job) == sorted(cases)
    assert by_job == one_by_one
    assert by_job["a-case1"]["searched"]["units"] > len(whole_store("a-")["units"])
