"""Finding cases: ``GET /cases`` with every filter the console's case list offers, each alone
and together, paging and the newest-first order."""

from __future__ import annotations

from typing import Any

import httpx

from tests.support.traces import demo_batch


def _answered(project: str) -> dict[str, Any]:
    """Two more cases beside the demo's: answered by another system in another session, one
    on a later day; their answers hold words no question does."""
    ops, cases = [], []
    for i, day in ((1, "2026-06-01"), (2, "2026-07-01")):
        ops.append(
            {
                "id": f"rag-answer-{i}",
                "name": "answer",
                "kind": "response",
                "system": "rag",
                "session_id": "evening",
                "ts": f"{day}T20:00:00Z",
                "inputs": [{"id": f"rag-q-{i}", "kind": "query", "content": f"question {i}"}],
                "outputs": [
                    {"id": f"rag-a-{i}", "kind": "answer", "content": f"Purple Zebra number {i}"}
                ],
            }
        )
        cases.append(
            {
                "id": f"rag-case-{i}",
                "question": f"Which animal, take {i}?",
                "expected_answer": "a dog",
                "verdict": "failed",
                "answer_unit": f"rag-a-{i}",
            }
        )
    return {"project": project, "units": [], "operations": ops, "cases": cases}


def _ids(client: httpx.Client, project: str, **params: Any) -> list[str]:
    """The ids a filter finds in id order; the newest-first statement (a statement of its own,
    with the same filters written out again) must find the same cases."""
    answer = client.get("/cases", params={"project": project, **params})
    assert answer.status_code == 200, answer.text
    found = [row["id"] for row in answer.json()]
    if "sort" not in params and "skip" not in params and "limit" not in params:
        newest = client.get("/cases", params={"project": project, **params, "sort": "newest"})
        assert newest.status_code == 200, newest.text
        assert sorted(row["id"] for row in newest.json()) == found, params
    return found


def test_each_filter_alone_and_together(client: httpx.Client, project: str) -> None:
    assert client.post("/traces", json=demo_batch(project)).status_code == 200
    assert client.post("/traces", json=_answered(project)).status_code == 200
    assert client.post("/attribute/case-3", params={"project": project}).status_code == 200
    assert client.post("/attribute/rag-case-2", params={"project": project}).status_code == 200
    demo = [f"case-{i}" for i in range(1, 7)]
    assert _ids(client, project) == [*demo, "rag-case-1", "rag-case-2"]
    # q reads the given answer too, in any case; the question as before.
    assert _ids(client, project, q="purple zebra") == ["rag-case-1", "rag-case-2"]
    assert _ids(client, project, q="DOG") == ["case-3"]
    assert _ids(client, project, system="rag") == ["rag-case-1", "rag-case-2"]
    assert _ids(client, project, session_id="qa") == demo
    assert _ids(client, project, since="2026-06-15T00:00:00") == ["rag-case-2"]
    assert _ids(client, project, until="2026-06-15T00:00:00Z") == [*demo, "rag-case-1"]
    assert _ids(client, project, attributed="true") == ["case-3", "rag-case-2"]
    assert "case-3" not in _ids(client, project, attributed="false")
    blamed = client.get("/cases/case-3", params={"project": project}).json()
    assert blamed["verdict"] == "failed"
    error_type = client.get("/cases/case-3/attribution", params={"project": project}).json()[
        "error_type"
    ]
    assert _ids(client, project, error_type=error_type)[0] == "case-3"
    # Together: every filter must hold.
    assert _ids(client, project, system="rag", attributed="true") == ["rag-case-2"]
    assert _ids(client, project, system="rag", q="dog") == []
    assert _ids(client, project, verdict="passed", session_id="qa") == ["case-6"]


def test_newest_first_and_paging(client: httpx.Client, project: str) -> None:
    assert client.post("/traces", json=demo_batch(project)).status_code == 200
    assert client.post("/traces", json=_answered(project)).status_code == 200
    newest = _ids(client, project, sort="newest")
    assert newest[:2] == ["rag-case-2", "rag-case-1"]
    assert newest[2:] == [f"case-{i}" for i in range(6, 0, -1)]
    pages = [_ids(client, project, sort="newest", skip=s, limit=3) for s in (0, 3, 6)]
    assert [case for page in pages for case in page] == newest
    assert _ids(client, project, skip=8) == []


def test_bad_filters_name_the_parameter(client: httpx.Client, project: str) -> None:
    for params, loc in (
        ({"error_type": "TypoError"}, "error_type"),
        ({"attributed": "maybe"}, "attributed"),
        ({"sort": "oldest"}, "sort"),
        ({"until": "tomorrow"}, "until"),
    ):
        answer = client.get("/cases", params={"project": project, **params})
        assert answer.status_code == 422
        assert answer.json()["details"][0]["loc"] == ["query", loc]
