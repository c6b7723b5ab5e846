"""A unit or an operation by id: ``GET /units/{id}`` and ``GET /operations/{id}``."""

from __future__ import annotations

import httpx

from tests.support.traces import DEMO_TRUTH, demo_batch


def test_a_unit_with_its_operations_and_cases(client: httpx.Client, project: str) -> None:
    assert client.post("/traces", json=demo_batch(project)).status_code == 200
    unit = client.get("/units/msg-1", params={"project": project}).json()
    assert unit["kind"] == "message" and unit["defined"] is True
    assert unit["content"].startswith("Alice: I just adopted a golden retriever")
    assert unit["produced_by"] == [] and "op-extract-1" in unit["consumed_by"]
    assert unit["cases"] == ["case-3"]  # its evidence
    answer = client.get("/units/answer-3", params={"project": project}).json()
    assert answer["produced_by"] == ["op-answer-3"] and answer["cases"] == ["case-3"]
    missing = client.get("/units/nope", params={"project": project})
    assert missing.status_code == 404 and "no unit 'nope'" in missing.json()["message"]


def test_an_operation_with_its_units_and_the_cases_blamed_on_it(
    client: httpx.Client, project: str
) -> None:
    assert client.post("/traces", json=demo_batch(project)).status_code == 200
    error_type, blamed = DEMO_TRUTH["case-3"]
    before = client.get(f"/operations/{blamed}", params={"project": project}).json()
    assert before["kind"] == "update" and before["blamed_in"] == []
    assert "mem-dog@tombstone" in before["produces"] and before["consumes"]
    assert client.post("/attribute/case-3", params={"project": project}).json()["error_type"] == (
        error_type
    )
    after = client.get(f"/operations/{blamed}", params={"project": project}).json()
    assert after["blamed_in"] == ["case-3"]
    # A unit id is no operation id.
    assert client.get("/operations/msg-1", params={"project": project}).status_code == 404
