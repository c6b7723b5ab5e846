"""A verdict given after the answer: ``POST /cases/{case_id}/verdict`` (the way Langfuse's
``score`` is sent after a trace), and the SDK's ``Tracer.verdict`` and case handle."""

from __future__ import annotations

from urllib.parse import quote

import httpx
from memtrace_client import MemTraceClient, Tracer

from tests.support.servers import ServiceHandle
from tests.support.traces import demo_batch


def test_a_verdict_recorded_later(client: httpx.Client, project: str) -> None:
    assert client.post("/traces", json=demo_batch(project)).status_code == 200
    before = client.get("/cases/case-6", params={"project": project}).json()
    assert before["verdict"] != "failed"
    body = {"verdict": "failed", "expected_answer": "Lisbon", "note": "user said so"}
    first = client.post("/cases/case-6/verdict", params={"project": project}, json=body)
    assert first.status_code == 200, first.text
    assert first.json()["verdict"] == "failed"
    again = client.post("/cases/case-6/verdict", params={"project": project}, json=body)
    assert again.status_code == 200 and again.json() == first.json()  # idempotent re-send
    case = client.get("/cases/case-6", params={"project": project}).json()
    assert (case["verdict"], case["expected_answer"]) == ("failed", "Lisbon")
    assert case["attributes"]["verdict_note"] == "user said so"
    failed = client.get("/cases", params={"project": project, "verdict": "failed"}).json()
    assert "case-6" in {c["id"] for c in failed}
    # The original case sent again (a replayed spool) is still an identical re-send, not a clash.
    resent = client.post("/traces", json=demo_batch(project))
    assert resent.status_code == 200, resent.text
    assert client.get("/cases/case-6", params={"project": project}).json()["verdict"] == "failed"


def test_verdict_errors(client: httpx.Client, project: str) -> None:
    assert client.post("/traces", json=demo_batch(project)).status_code == 200
    missing = client.post(
        "/cases/nope/verdict", params={"project": project}, json={"verdict": "failed"}
    )
    assert missing.status_code == 404, missing.text
    assert missing.json()["error"] == "not_found"
    bad = client.post(
        "/cases/case-1/verdict", params={"project": project}, json={"verdict": "wrong"}
    )
    assert bad.status_code == 422, bad.text
    assert bad.json()["details"][0]["loc"][-1] == "verdict"


def test_sdk_keeps_the_answer_and_records_the_verdict_later(
    service: ServiceHandle, client: httpx.Client, project: str
) -> None:
    tracer = Tracer(MemTraceClient(service.url, project=project), system="toy")

    @tracer.traced(kind="response")
    def answer(question: str) -> str:
        return "Porto"

    answer("Where do I live?")
    # The answer unit's id is known only to the tracer: case() takes the last answer it made.
    case = tracer.case("Where do I live?", "Lisbon")
    assert tracer.flush()
    stored = client.get(f"/cases/{quote(case, safe='')}", params={"project": project})
    assert stored.status_code == 200, stored.text
    assert stored.json()["answer_unit"] is not None
    assert stored.json()["verdict"] == "unknown"

    case.verdict("failed", note="thumbs down")  # later: the user's feedback
    tracer.verdict(case, "failed", note="thumbs down")  # the same, by id: idempotent
    after = client.get(f"/cases/{quote(case, safe='')}", params={"project": project})
    assert after.json()["verdict"] == "failed"
    subgraph = client.get(
        f"/cases/{quote(case, safe='')}/subgraph", params={"project": project}
    ).json()
    assert any((n.get("name") or "").endswith("answer") for n in subgraph["nodes"])
    tracer.close()
