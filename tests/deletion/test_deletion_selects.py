"""Which operations a deletion selects, and what selecting them costs: a session is whatever
``GET /sessions/{id}`` calls one (an operation's ``session_id`` or ``conversation_id``), and
both selections seek an index, so their cost is the operations they delete, never the
project's (read from Neo4j's own profile)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import httpx
from neo4j import Driver

from tests.support.plans import profiled

SESSIONS, OPS = 40, 3


def _project(project: str) -> dict[str, Any]:
    """Sessions named each way: even ones by ``session_id``, odd ones by a ``conversation_id``
    attribute only, as SDK traces of a chat app name them; one day per session."""
    ops = []
    for s in range(SESSIONS):
        named = {"session_id": f"s{s:02d}"} if s % 2 == 0 else {}
        for i in range(OPS):
            ops.append(
                {
                    "id": f"o{s}-{i}",
                    "name": "extract",
                    "kind": "extraction",
                    "ts": f"2026-03-{s % 28 + 1:02d}T10:00:0{i}Z",
                    **named,
                    "attributes": {} if named else {"conversation_id": f"s{s:02d}"},
                    "inputs": [{"id": f"m{s}-{i}", "kind": "message", "content": f"turn {i}"}],
                    "outputs": [{"id": f"k{s}-{i}", "kind": "memory", "content": f"fact {i}"}],
                }
            )
    return {"project": project, "operations": ops}


def test_a_session_named_by_its_conversation_id_is_deleted_like_one_named_by_session_id(
    client: httpx.Client, project: str
) -> None:
    assert client.post("/traces", json=_project(project)).status_code == 200
    params = {"project": project}
    for session in ("s02", "s03"):  # by session_id, by conversation_id
        assert client.get(f"/sessions/{session}", params=params).status_code == 200
        done = client.delete(f"/sessions/{session}", params=params)
        assert done.status_code == 200, done.text
        # its operations and the message and memory only each of them explains
        assert done.json() == {"operations": OPS, "units": 2 * OPS, "cases": 0, "attributions": 0}
        assert client.get(f"/sessions/{session}", params=params).status_code == 404
    assert client.get("/sessions/s04", params=params).status_code == 200  # the others stay


def test_both_selections_seek_an_index_and_read_only_what_they_delete(
    client: httpx.Client, project: str, neo4j_driver: Driver
) -> None:
    assert client.post("/traces", json=_project(project)).status_code == 200
    selections = {
        "deletion/select_session_operations": ({"session_id": "s05"}, OPS),
        # 2026-03-01 and 02: sessions 0, 1, 28 and 29
        "deletion/select_operations_before": (
            {"before": datetime(2026, 3, 3, tzinfo=UTC)},
            4 * OPS,
        ),
    }
    for statement, (params, selected) in selections.items():
        plan, records = profiled(neo4j_driver, statement, project=project, **params)
        ids = [record["id"] for record in records]
        assert len(ids) == selected, statement
        kinds = {op["operatorType"].split("@")[0] for op in plan}
        assert not kinds & {"NodeIndexScan", "NodeByLabelScan", "AllNodesScan"}, statement
        seeks = [op for op in plan if op["operatorType"].startswith("NodeIndexSeek")]
        assert seeks, statement
        # of the project's 120 operations, each seek reads the ones selected (and one more)
        assert all(op["rows"] <= selected + 1 for op in seeks), statement
