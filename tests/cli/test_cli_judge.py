"""`memtrace attribute CASE --judge J` prints J's result, attributing again when the stored one
is another judge's; without --judge it prints what is stored."""

from __future__ import annotations

import json

import httpx

from tests.support.cli import memtrace
from tests.support.llm_server import ScriptedLLM, oracle_from_ids
from tests.support.servers import ServiceHandle
from tests.support.traces import demo_batch


def _attribute(service: ServiceHandle, project: str, *args: str) -> dict[str, object]:
    done = memtrace(
        "attribute", "case-2", "--project", project, "--url", service.url, "--json", *args
    )
    assert done.returncode == 0, done.stderr
    (result,) = json.loads(done.stdout)
    assert isinstance(result, dict)
    return result


def test_attribute_with_a_judge_prints_that_judges_result(
    llm_service: ServiceHandle, llm: ScriptedLLM, project: str
) -> None:
    llm.script["answer"] = oracle_from_ids({"msg-2", "fact-2", "mem-job@1"})  # type: ignore[attr-defined]
    sent = httpx.post(f"{llm_service.url}/traces", json=demo_batch(project), timeout=60)
    assert sent.status_code == 200
    stored = _attribute(llm_service, project)["judge"]
    assert (stored["kind"], stored["llm_calls"]) == ("heuristic", 0)
    asked = _attribute(llm_service, project, "--judge", "llm")
    assert asked["judge"]["kind"] == "llm" and asked["judge"]["llm_calls"] > 0
    assert _attribute(llm_service, project) == asked  # stored, printed as it is
