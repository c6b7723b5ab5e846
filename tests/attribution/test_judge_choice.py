"""The judge a request names is the judge whose result it gets: in the body or in the query of
POST /attribute/{case_id}, a stored result of another judge is attributed again, and a judge the
service cannot run (no LLM endpoint) is a 422 saying what to set. Never another judge's stored
result without a word."""

from __future__ import annotations

from typing import Any

import httpx

from tests.support.llm_server import ScriptedLLM, oracle_from_ids
from tests.support.servers import ServiceHandle
from tests.support.traces import demo_batch


def _post(
    c: httpx.Client, project: str, case_id: str, body: Any = None, **query: str
) -> httpx.Response:
    return c.post(f"/attribute/{case_id}", params={"project": project, **query}, json=body)


def test_the_judge_named_in_the_query_or_body_answers(
    llm_service: ServiceHandle, llm: ScriptedLLM, project: str
) -> None:
    llm.script["answer"] = oracle_from_ids({"msg-2", "fact-2", "mem-job@1"})  # type: ignore[attr-defined]
    with httpx.Client(base_url=llm_service.url, timeout=60) as c:
        assert c.post("/traces", json=demo_batch(project)).status_code == 200
        first = _post(c, project, "case-2").json()
        assert first["judge"]["kind"] == "heuristic"

        before = len(llm.requests)
        asked = _post(c, project, "case-2", judge="llm")
        assert asked.status_code == 200, asked.text
        assert asked.json()["judge"]["kind"] == "llm"
        assert asked.json()["judge"]["llm_calls"] == len(llm.requests) - before > 0

        # Now stored by the llm judge: asked again (or with no judge named), it is returned.
        before = len(llm.requests)
        for again in (_post(c, project, "case-2", judge="llm"), _post(c, project, "case-2")):
            assert again.json()["created_at"] == asked.json()["created_at"]
        assert len(llm.requests) == before
        refreshed = _post(c, project, "case-2", judge="llm", refresh="true").json()
        assert refreshed["created_at"] != asked.json()["created_at"]
        assert len(llm.requests) > before

        # The body names a judge as the query does; both naming different ones: refused.
        back = _post(c, project, "case-2", {"judge": "heuristic"}).json()
        assert back["judge"]["kind"] == "heuristic"
        both = _post(c, project, "case-2", {"judge": "heuristic"}, judge="llm")
        assert both.status_code == 422
        assert both.json()["details"][0]["loc"] == ["query", "judge"]
        unknown = _post(c, project, "case-2", judge="oracle")
        assert unknown.status_code == 422
        assert unknown.json()["details"][0]["loc"] == ["query", "judge"]


def test_an_llm_judge_without_an_endpoint_says_so_even_when_a_result_is_stored(
    client: httpx.Client, project: str
) -> None:
    assert client.post("/traces", json=demo_batch(project)).status_code == 200
    assert _post(client, project, "case-4").status_code == 200  # the heuristic's, stored
    refused = _post(client, project, "case-4", judge="llm")
    assert refused.status_code == 422, refused.text
    assert "MEMTRACE_LLM_BASE_URL" in refused.json()["message"]
    assert refused.json()["details"] == [
        {"loc": ["query", "judge"], "msg": "no LLM endpoint configured"}
    ]
