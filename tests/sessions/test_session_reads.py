"""What a session read costs, from Neo4j's own profile: a page of the list reads the nodes of
its own sessions (and of the next one), not every session of the project, and a session is
read by index seeks on its id, never a scan; a session's counts stop at a cap, however long it
grew; past its time budget a read is a 422."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
from neo4j import Driver

from tests.support.plans import profiled
from tests.support.servers import Neo4jHandle, client_of_service
from tests.support.traces import demo_batch

SESSIONS, OPS = 200, 3


def _many_sessions(project: str) -> dict[str, Any]:
    ops = [
        {
            "id": f"o{s}-{i}",
            "name": "extract",
            "kind": "extraction",
            "session_id": f"s{s:03d}",
            "ts": "2026-06-01T10:00:00Z",
            "attributes": {"conversation_id": f"c{s:03d}"},
            "inputs": [
                {
                    "id": f"m{s}-{i}",
                    "kind": "message",
                    "content": "hi",
                    "attributes": {"conversation_id": f"c{s:03d}"},
                }
            ],
        }
        for s in range(SESSIONS)
        for i in range(OPS)
    ]
    return {"project": project, "operations": ops}


def test_a_page_reads_its_own_sessions_only(
    client: httpx.Client, project: str, neo4j_driver: Driver
) -> None:
    assert client.post("/traces", json=_many_sessions(project)).status_code == 200
    limit = 10
    plan, _ = profiled(
        neo4j_driver, "sessions/list_sessions", project=project, after="", limit=limit
    )
    seeks = [op for op in plan if op["operatorType"].startswith("NodeIndexSeek")]
    assert len(seeks) == 3  # session_id of operations, conversation_id of operations and units
    for seek in seeks:
        # the page's sessions and the first node of the next one, of 600 in the index
        assert seek["rows"] <= OPS * limit + 1, seek["args"]["Details"]
    listed = client.get("/sessions", params={"project": project, "limit": limit}).json()
    assert [s["id"] for s in listed["sessions"]] == [f"c{s:03d}" for s in range(limit)]


def test_a_session_is_read_by_seeks_on_its_id(
    client: httpx.Client, project: str, neo4j_driver: Driver
) -> None:
    assert client.post("/traces", json=_many_sessions(project)).status_code == 200
    common = {"project": project, "session_id": "s007"}
    reads = {
        "sessions/session_summaries": {"project": project, "ids": ["s007"], "cap": 100},
        "sessions/session_turns": {
            **common,
            "skip": 0,
            "limit": 10,
            "operation_limit": 5,
            "output_limit": 5,
            "value_chars": 100,
        },
        "sessions/session_operations": {**common, "limit": 10},
        "sessions/session_cases": {**common, "limit": 10, "value_chars": 100},
    }
    for statement, params in reads.items():
        plan, _ = profiled(neo4j_driver, statement, **params)
        kinds = {op["operatorType"].split("@")[0] for op in plan}
        assert not kinds & {"NodeIndexScan", "NodeByLabelScan", "AllNodesScan"}, statement
        for op in plan:
            if op["operatorType"].startswith("NodeIndexSeek"):
                assert op["rows"] <= OPS, (statement, op["args"]["Details"])


def test_a_read_past_its_budget_is_a_422_saying_what_to_narrow(
    neo4j: Neo4jHandle, workdir: Path
) -> None:
    with client_of_service(
        neo4j, workdir, timeout_s=60, MEMTRACE_AUDIT_TIMEOUT_S="0.000001"
    ) as hurried:
        project = "hurried-sessions"
        assert hurried.post("/traces", json=demo_batch(project)).status_code == 200
        for path, narrow in (("/sessions", "fewer (limit)"), ("/sessions/s1", "fewer turns")):
            stopped = hurried.get(path, params={"project": project})
            assert stopped.status_code == 422, stopped.text[:300]
            assert "Retry-After" not in stopped.headers
            body = stopped.json()
            assert body["error"] == "query_failed"
            assert "time budget of 1e-06 s" in body["message"] and narrow in body["message"]


CAP, LONG = 5, 12


def _answering(
    op_id: str, ts: str, read: dict[str, Any], answer: str, **named: Any
) -> dict[str, Any]:
    """An operation reading ``read`` and writing the answer unit ``answer``; ``named``: how it
    names its session (session_id, or attributes with a conversation_id)."""
    return {
        "id": op_id,
        "name": "respond",
        "kind": "response",
        "ts": ts,
        **named,
        "inputs": [read],
        "outputs": [{"id": answer, "kind": "answer", "content": "no"}],
    }


def _failed_case(case_id: str, answer: str) -> dict[str, Any]:
    return {
        "id": case_id,
        "question": "q?",
        "expected_answer": "yes",
        "verdict": "failed",
        "answer_unit": answer,
    }


def _long_session(project: str, long: int = LONG) -> dict[str, Any]:
    """Session "long": ``long`` operations, each reading a message of its own and answering a
    failed case; session "short": two operations."""
    ops, cases = [], []
    for s, n in (("long", long), ("short", 2)):
        for i in range(n):
            message = {"id": f"{s}-m-{i}", "kind": "message", "content": "hi"}
            ts = f"2026-06-01T10:{i // 60:02d}:{i % 60:02d}Z"
            ops.append(_answering(f"{s}-op-{i}", ts, message, f"{s}-a-{i}", session_id=s))
            cases.append(_failed_case(f"{s}-case-{i}", f"{s}-a-{i}"))
    return {"project": project, "operations": ops, "cases": cases}


def test_a_sessions_counts_stop_at_the_cap(
    neo4j: Neo4jHandle, workdir: Path, neo4j_driver: Driver
) -> None:
    with client_of_service(neo4j, workdir, MEMTRACE_SESSION_COUNT_CAP=str(CAP)) as capped:
        project = "capped-sessions"
        assert capped.post("/traces", json=_long_session(project)).status_code == 200
        listed = capped.get("/sessions", params={"project": project}).json()["sessions"]
        rows = {row["id"]: row for row in listed}
        long, short = rows["long"], rows["short"]
        assert (long["operations"], long["turns"], long["cases"]) == (CAP, CAP, CAP)
        assert long["failed_cases"] == CAP
        assert long["capped"] is True and long["first_at"] is None and long["last_at"] is None
        assert (short["operations"], short["turns"], short["cases"]) == (2, 2, 2)
        assert short["capped"] is False
        assert (short["first_at"], short["last_at"]) == (
            "2026-06-01T10:00:00Z",
            "2026-06-01T10:00:01Z",
        )
        # the session's own page says the same
        view = capped.get("/sessions/long", params={"project": project}).json()
        assert view["summary"] == long
    # each branch of the count reads at most CAP + 1 of the session's LONG operations
    plan, _ = profiled(
        neo4j_driver, "sessions/session_summaries", project=project, ids=["long"], cap=CAP
    )
    seeks = [op for op in plan if op["operatorType"].startswith("NodeIndexSeek")]
    assert seeks
    assert any(op["rows"] == CAP + 1 for op in seeks), [op["rows"] for op in seeks]
    for seek in seeks:
        assert seek["rows"] <= CAP + 1, seek["args"]["Details"]


def test_a_sessions_count_holds_memory_in_proportion_to_it(
    client: httpx.Client, project: str, neo4j_driver: Driver
) -> None:
    # A UNION subquery keys its distinct rows on what it imports: given the session's list of
    # operations, each of its N rows held the whole list (N^2; a session of 4,000 operations
    # went past Neo4j's 512 MB per transaction). 300 operations: about 50 kB each way now,
    # 2.5 MB then.
    assert client.post("/traces", json=_long_session(project, 300)).status_code == 200
    plan, records = profiled(
        neo4j_driver, "sessions/session_summaries", project=project, ids=["long"], cap=10_000
    )
    assert records[0]["operations"] == 300 and records[0]["turns"] == 300
    held = {op["operatorType"]: op["args"].get("Memory", 0) for op in plan}
    assert max(held.values()) < 1_000_000, held


def _interleaved_session(project: str, n: int) -> dict[str, Any]:
    """A session of ``n`` operations, half naming it by session_id and half by a
    conversation_id attribute only, two at each time (so ties are cut by id, and the ids do
    not sort in time order), each answering a case."""
    ops, cases = [], []
    for i in range(n):
        named = {"session_id": "long"} if i % 2 else {"attributes": {"conversation_id": "long"}}
        query = {"id": f"q-{i:03d}", "kind": "query", "content": "q?"}
        ts = f"2026-06-01T10:{i // 2 // 60:02d}:{i // 2 % 60:02d}Z"
        ops.append(_answering(f"op-{(7 * i) % n:03d}", ts, query, f"a-{i:03d}", **named))
        cases.append(_failed_case(f"case-{(11 * i) % n:03d}", f"a-{i:03d}"))
    return {"project": project, "operations": ops, "cases": cases}


def test_a_page_of_operations_and_cases_reads_a_page_not_the_session(
    client: httpx.Client, project: str, neo4j_driver: Driver
) -> None:
    """The first operations and cases of a session come off the (project, id, ts) indexes in
    time order: each branch reads about a page, however long the session is, and the page is
    the first by (time, id) across both ways of naming the session."""
    n, limit = 120, 10
    batch = _interleaved_session(project, n)
    assert client.post("/traces", json=batch).status_code == 200
    by_time = sorted(batch["operations"], key=lambda op: (op["ts"], op["id"]))
    case_of = {case["answer_unit"]: case["id"] for case in batch["cases"]}
    answers = sorted((op["ts"], case_of[op["outputs"][0]["id"]]) for op in batch["operations"])
    common = {"project": project, "session_id": "long", "limit": limit}
    for statement, params, expected in (
        ("sessions/session_operations", common, [op["id"] for op in by_time[:limit]]),
        (
            "sessions/session_cases",
            {**common, "value_chars": 10},
            [case for _, case in answers[:limit]],
        ),
    ):
        plan, records = profiled(neo4j_driver, statement, **params)
        assert [r["id"] for r in records] == expected, statement
        seeks = [op for op in plan if op["operatorType"].startswith("NodeIndexSeek")]
        assert seeks, statement
        for seek in seeks:  # a page and the next entry (to see a tie), not the session's n / 2
            assert seek["rows"] <= limit + 2, (statement, seek["args"]["Details"], seek["rows"])
