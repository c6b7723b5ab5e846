"""The units a case names (its answer, its evidence) and POST /traces' warnings: a case naming a
unit that neither its batch nor the project's store defines is stored, with a warning naming the
case, the field and the unit; the example batch of docs/sending-traces.md is read from the page
itself, so the documentation stays a batch that is accepted cleanly and attributes."""

from __future__ import annotations

import copy
import json
import re
from typing import Any

import httpx

from tests.support.attribution import attribute
from tests.support.servers import REPO

DOCS = REPO / "docs" / "sending-traces.md"


def docs_example(project: str) -> dict[str, Any]:
    """The first JSON block of docs/sending-traces.md (the batch it shows), moved into
    ``project``."""
    found = re.search(r"```json\n(.*?)\n```", DOCS.read_text(encoding="utf-8"), re.DOTALL)
    assert found is not None, f"no JSON example in {DOCS}"
    batch = json.loads(found.group(1))
    assert batch["cases"], "the example shows a case"
    return {**batch, "project": project}


def post(client: httpx.Client, batch: dict[str, Any]) -> list[str]:
    """Send ``batch``; the warnings of its (200) answer."""
    answer = client.post("/traces", json=batch)
    assert answer.status_code == 200, answer.text
    return list(answer.json()["warnings"])


def test_the_documented_example_is_accepted_cleanly_and_attributes(
    client: httpx.Client, project: str
) -> None:
    batch = docs_example(project)
    assert post(client, batch) == []
    case = batch["cases"][0]
    result = attribute(client, project, case["id"])
    assert result.status_code == 200, result.text
    assert result.json()["status"] == "attributed", result.json()["reason"]
    # What the page says it blames.
    page = DOCS.read_text(encoding="utf-8")
    said = f"`POST /attribute/{case['id']}` blames `{result.json()['operation']['id']}` with an "
    assert said + f"`{result.json()['error_type']}`" in page


def test_a_case_naming_a_unit_nothing_defines_is_stored_with_a_warning(
    client: httpx.Client, project: str
) -> None:
    batch = docs_example(project)
    answering = [op for op in batch["operations"] if op["kind"] == "response"]
    batch["operations"] = [op for op in batch["operations"] if op["kind"] != "response"]
    batch["cases"][0]["evidence_units"] = ["msg-1", "msg-never-sent"]
    case_id, answer = batch["cases"][0]["id"], batch["cases"][0]["answer_unit"]
    warnings = post(client, batch)
    assert len(warnings) == 2, warnings
    assert f"case {case_id!r}: its answer_unit {answer!r} is defined neither" in warnings[0]
    assert f"project {project!r}" in warnings[0]
    assert f"case {case_id!r}: its evidence_units 'msg-never-sent'" in warnings[1]
    stored = client.get(f"/cases/{case_id}", params={"project": project})
    assert stored.status_code == 200 and stored.json()["answer_unit"] == answer  # stored anyway

    # The same batch sent again warns again (nothing defines the units yet); once the answer's
    # operation is sent, only the evidence that still nothing defines is warned about.
    assert post(client, batch) == warnings
    later = {"project": project, "operations": answering, "cases": batch["cases"]}
    assert post(client, later) == warnings[1:]


def test_a_unit_defined_by_an_earlier_batch_is_no_warning(
    client: httpx.Client, project: str
) -> None:
    batch = docs_example(project)
    trace = {**copy.deepcopy(batch), "cases": []}
    assert post(client, trace) == []
    assert post(client, {"project": project, "cases": batch["cases"]}) == []
    # A unit an earlier batch only named by id (an input, no content) defines nothing.
    named = {
        "project": project,
        "operations": [
            {
                "id": "op-answer-by-id",
                "name": "answer",
                "kind": "response",
                "ts": "2026-05-03T09:00:00Z",
                "inputs": ["query-1"],
                "outputs": ["ans-by-id"],
            }
        ],
    }
    assert post(client, named) == []
    case = {**batch["cases"][0], "id": "q-2", "answer_unit": "ans-by-id", "evidence_units": []}
    warnings = post(client, {"project": project, "cases": [case]})
    assert len(warnings) == 1 and "'q-2': its answer_unit 'ans-by-id'" in warnings[0], warnings
