"""GET /sessions and GET /sessions/{id} against the real service and Neo4j: which sessions a
project has and what each holds, turns in conversation order (with a time, and without one as
OTLP sends them), the operations each turn caused, the cases asked with their verdicts and
attributions, the bounds, and the 404 of a session nothing names."""

from __future__ import annotations

from typing import Any

import httpx

from tests.support.otlp_export import export, messages, span
from tests.support.traces import demo_batch

PROTOBUF = {"content-type": "application/x-protobuf"}


def sessions(client: httpx.Client, project: str, **params: Any) -> dict[str, Any]:
    response = client.get("/sessions", params={"project": project, **params})
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def one(client: httpx.Client, project: str, session_id: str, **params: Any) -> dict[str, Any]:
    response = client.get(f"/sessions/{session_id}", params={"project": project, **params})
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def test_the_demo_has_three_sessions_counted(client: httpx.Client, project: str) -> None:
    assert client.post("/traces", json=demo_batch(project)).status_code == 200
    listed = sessions(client, project)
    assert listed["next_after"] is None
    rows = {s["id"]: s for s in listed["sessions"]}
    assert list(rows) == ["qa", "s1", "s2"]  # id order
    assert rows["s1"] == {
        "id": "s1",
        "turns": 3,
        "operations": 2,
        "cases": 0,
        "failed_cases": 0,
        "capped": False,
        # msg-1 at 10:00, op-update-1 at 10:04
        "first_at": "2026-05-01T10:00:00Z",
        "last_at": "2026-05-01T10:04:00Z",
    }
    assert (rows["qa"]["turns"], rows["qa"]["operations"]) == (0, 12)
    assert (rows["qa"]["cases"], rows["qa"]["failed_cases"]) == (6, 5)


def test_pages_follow_the_cursor_to_the_end(client: httpx.Client, project: str) -> None:
    assert client.post("/traces", json=demo_batch(project)).status_code == 200
    first = sessions(client, project, limit=2)
    assert [s["id"] for s in first["sessions"]] == ["qa", "s1"]
    assert first["next_after"] == "s1"
    second = sessions(client, project, limit=2, after=first["next_after"])
    assert [s["id"] for s in second["sessions"]] == ["s2"]
    assert second["next_after"] is None
    assert sessions(client, project, after="s2") == {"sessions": [], "next_after": None}


def test_a_session_shows_its_turns_in_order_and_what_each_caused(
    client: httpx.Client, project: str
) -> None:
    assert client.post("/traces", json=demo_batch(project)).status_code == 200
    s2 = one(client, project, "s2")
    assert s2["summary"]["turns"] == 3
    assert [t["id"] for t in s2["turns"]] == ["msg-4", "msg-5", "msg-6"]
    assert [t["index"] for t in s2["turns"]] == [0, 1, 2]
    first = s2["turns"][0]
    assert first["content"] == "Alice: Big news, I moved to Portland last month."
    assert [op["id"] for op in first["operations"]] == ["op-extract-2"]
    caused = first["operations"][0]
    assert caused["kind"] == "extraction" and caused["output_count"] == 3
    assert [u["id"] for u in caused["outputs"]] == ["fact-3", "fact-4", "fact-5"]
    assert [op["id"] for op in s2["operations"]] == ["op-extract-2", "op-update-2"]
    assert s2["cases"] == []
    # A page of turns: the second one alone, with its place in the session.
    page = one(client, project, "s2", skip=1, limit=1)
    assert [(t["index"], t["id"]) for t in page["turns"]] == [(1, "msg-5")]


def test_a_session_lists_its_cases_with_verdicts_and_attributions(
    client: httpx.Client, project: str
) -> None:
    assert client.post("/traces", json=demo_batch(project)).status_code == 200
    attributed = client.post("/attribute/case-4", params={"project": project})
    assert attributed.status_code == 200, attributed.text
    qa = one(client, project, "qa")
    assert qa["turns"] == []  # its operations read queries and contexts, not messages
    cases = qa["cases"]
    assert [c["id"] for c in cases] == [f"case-{i}" for i in range(1, 7)]  # answer order
    assert [c["verdict"] for c in cases] == ["failed"] * 5 + ["passed"]
    four = cases[3]
    assert four["attribution_status"] == "attributed"
    assert (four["error_type"], four["blamed_operation"]) == ("RetrievalError", "op-search-4")
    assert four["reason"] and four["confidence"] is not None
    assert cases[0]["attribution_status"] is None
    assert cases[0]["answer"] == "Portland"


def test_an_unknown_session_is_a_404_naming_it(client: httpx.Client, project: str) -> None:
    assert client.post("/traces", json=demo_batch(project)).status_code == 200
    missing = client.get("/sessions/no-such-session", params={"project": project})
    assert missing.status_code == 404
    body = missing.json()
    assert body["error"] == "not_found"
    assert "no session 'no-such-session'" in body["message"]
    # Another project's session is unknown here too.
    other = client.get("/sessions/s1", params={"project": project + "-other"})
    assert other.status_code == 404


def _chat(trace: int, sid: int, start: float, history: list[tuple[str, str]], reply: str) -> Any:
    return span(
        trace,
        sid,
        "chat gpt",
        start,
        attributes={
            "gen_ai.operation.name": "chat",
            "session.id": "conv-7",
            "gen_ai.input.messages": messages(*history),
            "gen_ai.output.messages": messages(("assistant", reply)),
        },
    )


def test_otlp_turns_without_times_follow_the_calls_that_read_them(
    client: httpx.Client, project: str
) -> None:
    """Each call reads the conversation so far; its messages carry no ts, so a turn's time is
    its first reader's and, within one call, its place among the call's inputs."""
    turn1 = [("user", "hello, I am Ana")]
    turn2 = [*turn1, ("assistant", "hi Ana"), ("user", "I live in Lisbon")]
    request = export(
        _chat(1, 1, 0.0, turn1, "hi Ana"),
        _chat(2, 1, 10.0, turn2, "noted"),
        span(3, 1, "embed", 20.0, attributes={"gen_ai.operation.name": "embeddings"}),
    )
    sent = client.post(
        "/otlp/v1/traces",
        content=request.SerializeToString(),
        headers={**PROTOBUF, "X-MemTrace-Project": project},
    )
    assert sent.status_code == 200, sent.text
    listed = sessions(client, project)["sessions"]
    assert [s["id"] for s in listed] == ["conv-7"]  # the embedding names no session
    conv = one(client, project, "conv-7")
    assert [(t["role"], t["content"]) for t in conv["turns"]] == [
        ("user", "hello, I am Ana"),
        ("assistant", "hi Ana"),
        ("user", "I live in Lisbon"),
    ]
    first = conv["turns"][0]
    # Read by both calls; each produced its reply.
    assert first["operation_count"] == 2
    assert [op["outputs"][0]["content"] for op in first["operations"]] == ["hi Ana", "noted"]
    assert conv["summary"]["operations"] == 2


def test_a_conversation_id_attribute_names_a_session(client: httpx.Client, project: str) -> None:
    """Units and operations naming a conversation_id (and no session_id) make a session, its
    turns ordered by their own times; a batch naming none makes none."""
    batch = {
        "project": project,
        "units": [
            {
                "id": f"m{i}",
                "kind": "message",
                "content": f"turn {i}",
                "ts": f"2026-06-01T10:0{9 - i}:00Z" if i else None,
                "attributes": {"conversation_id": "c-42", "role": "user"},
            }
            for i in range(3)
        ],
        "operations": [
            {
                "id": "lonely",
                "name": "answer",
                "kind": "response",
                "ts": "2026-06-01T11:00:00Z",
                "inputs": [{"id": "q", "kind": "query", "content": "where?"}],
                "outputs": [{"id": "a", "kind": "answer", "content": "there"}],
            }
        ],
        "cases": [{"id": "k", "question": "where?", "expected_answer": "here", "answer_unit": "a"}],
    }
    assert client.post("/traces", json=batch).status_code == 200, batch
    assert [s["id"] for s in sessions(client, project)["sessions"]] == ["c-42"]
    conv = one(client, project, "c-42")
    # m2 at 10:07, m1 at 10:08, m0 has no time and no reader: last.
    assert [t["id"] for t in conv["turns"]] == ["m2", "m1", "m0"]
    assert conv["turns"][0]["operations"] == [] and conv["operations"] == []
    assert conv["summary"]["operations"] == 0


def test_bounds_are_enforced(client: httpx.Client, project: str) -> None:
    long_text = "x" * 5000
    batch = {
        "project": project,
        "operations": [
            {
                "id": "op",
                "name": "extract",
                "kind": "extraction",
                "session_id": "big",
                "ts": "2026-06-01T10:00:00Z",
                "inputs": [{"id": "msg", "kind": "message", "content": long_text}],
                "outputs": [
                    {"id": f"fact-{i:02d}", "kind": "other", "content": "f"} for i in range(15)
                ],
            }
        ],
    }
    assert client.post("/traces", json=batch).status_code == 200
    big = one(client, project, "big")
    turn = big["turns"][0]
    assert len(turn["content"]) == big["value_chars"] and turn["content_chars"] == 5000
    caused = turn["operations"][0]
    assert caused["output_count"] == 15 and len(caused["outputs"]) == 10
    for params in ({"limit": 501}, {"limit": 0}, {"skip": -1}):
        refused = client.get("/sessions/big", params={"project": project, **params})
        assert refused.status_code == 422, params
    assert client.get("/sessions", params={"project": project, "limit": 201}).status_code == 422


def test_a_project_without_sessions_lists_none(client: httpx.Client, project: str) -> None:
    assert sessions(client, project) == {"sessions": [], "next_after": None}
