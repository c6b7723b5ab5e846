"""Prompt versions end to end: recorded by the Tracer into the running service and Neo4j, listed
with the failures blamed on them (stored attributions), optimised against the scripted
OpenAI-compatible server, and the next round run with the newest version."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from memtrace_client import MemTraceClient, Prompt, RequestFailed, Tracer
from neo4j import Driver

from service.attribution.judges.llm import unit_ids_in_prompt
from tests.support.cli import memtrace
from tests.support.llm_server import Reply, ScriptedLLM, user_text
from tests.support.servers import ServiceHandle

EXTRACT_V1 = (
    'Extract the facts about people from the conversation {conversation}. Answer {"facts": []}.'
)
ANSWER_V1 = "Answer the question {question} from the memories {memories}."
ADDED_RULE = "Keep every date and time exactly as it was said."


def run_round(tracer: Tracer, extract: Prompt | tuple[str, str], n: int, tag: str) -> list[str]:
    """``n`` conversations through extraction (with ``extract``), retrieval and answering (with
    the answer prompt). The extraction drops each date, so every case fails with an
    ExtractionError blamed on the extraction. Returns the case ids."""

    @tracer.traced("answer", kind="response", prompt=("answer", ANSWER_V1))
    def answer(question: Any, context: Any) -> Any:
        return tracer.answer("Alex adopted the dog at some point.")

    cases = []
    for i in range(n):
        said = tracer.message(f"Alex adopted a dog named Rex{tag}{i} on 12 May 2021.", role="user")
        with tracer.operation("extract", kind="extraction", inputs=[said], prompt=extract) as op:
            fact = tracer.memory(f"Alex adopted a dog named Rex{tag}{i}", memory_id=f"m{tag}{i}")
            op.output(fact)
        question = tracer.query(f"When did Alex adopt Rex{tag}{i}?")
        with tracer.operation("retrieve", kind="retrieval", inputs=[question, fact]) as op:
            context = tracer.context(fact.content)
            op.output(context)
        given = answer(question, context)
        cases.append(
            tracer.case(question.content, "12 May 2021", given, "failed", evidence_units=[said])
        )
    assert tracer.flush(60)
    return cases


def attribute(client: httpx.Client, project: str, cases: list[str]) -> None:
    for case in cases:
        result = client.post(f"/attribute/{case}", params={"project": project}).json()
        assert (result["error_type"], result["operation"]["name"]) == (
            "ExtractionError",
            "extract",
        ), result


Edit = str | Reply | Callable[[dict[str, Any]], str | Reply]


def optimizer(edit: Edit | None = None) -> Any:
    """The scripted LLM as the optimiser sees it: feedback that dates were dropped, a merged
    instruction, and an edit that adds the rule (or answers ``edit``, or what ``edit`` says to
    the edit request)."""

    def answer(request: dict[str, Any]) -> str | Reply:
        system = str(request["messages"][0]["content"])
        if system.startswith("You combine feedback"):
            return f"- {ADDED_RULE}"
        if system.startswith("You edit a prompt"):
            if callable(edit):
                return edit(request)
            if edit is not None:
                return edit
            return f"{_template(request)}\n{ADDED_RULE}"
        return "The prompt does not ask to keep dates, so the date was dropped."

    return answer


def _template(edit_request: dict[str, Any]) -> str:
    return user_text(edit_request).split("Current template:\n", 1)[1]


def echo_of_the_request(request: dict[str, Any]) -> Reply:
    """What a small model did with the edit request: copied it back, cut at its output cap."""
    return Reply(user_text(request)[:160], "length")


def echo_of_the_instructions(request: dict[str, Any]) -> str:
    """The system message's instructions, then the edited template: finished, every
    placeholder kept, changed, and still not a template to store."""
    system = str(request["messages"][0]["content"])
    return f"{system}\n{_template(request)}\n{ADDED_RULE}"


def echo_of_the_labels(request: dict[str, Any]) -> str:
    """The request from its placeholders line on: the instructions and the template, labelled."""
    return user_text(request).split("\n", 1)[1]


def echo_reworded(request: dict[str, Any]) -> str:
    """The template with the rule, and two of the request's instructions copied with their
    punctuation changed and one cut short: no framing line verbatim, the framing all the same."""
    return (
        f"{_template(request)}\nKeep every placeholder exactly as it is written, they are listed."
        f"\nAnswer with the complete new template only.\n{ADDED_RULE}"
    )


DATA_NODES = "MATCH (n {project: $p}) WHERE NOT n:OptimizationClaim RETURN count(n) AS n"
"""The project's nodes but the prompt's optimisation claim: that one is made by the first
optimisation of a prompt, holds the running one's id, and stays, empty, once it ends."""


def assert_released(driver: Driver, project: str) -> None:
    """The prompt's claim exists (the optimisation ran) and holds nothing now."""
    claims = driver.execute_query(
        "MATCH (c:OptimizationClaim {project: $p}) RETURN c.operation_id AS holder", p=project
    ).records
    assert [c["holder"] for c in claims] == [None]


THRICE = f"The prompt template:\n{EXTRACT_V1}\n" * 3
"""What SmolLM2-135M proposed: the old template three times under a header of its own."""
LOOPING = "{conversation}\n" + "The prompt is: - [other]\n" * 12
"""A model looping on one line (placeholder kept, so only the repetition tells)."""


@pytest.fixture
def tracer(llm_service: ServiceHandle, project: str, tmp_path: Any) -> Any:
    t = Tracer(MemTraceClient(llm_service.url, project=project), system="toy", spool_dir=tmp_path)
    yield t
    t.close()


@pytest.fixture
def http(llm_service: ServiceHandle) -> Any:
    with httpx.Client(base_url=llm_service.url, timeout=60) as c:
        yield c


def test_versions_are_units_named_by_text_and_counted_with_their_failures(
    tracer: Tracer, http: httpx.Client, project: str, neo4j_driver: Driver
) -> None:
    cases = run_round(tracer, ("fact-extraction", EXTRACT_V1), 3, "a")
    # Another tracer (another process, say) recording the same text names the same version.
    again = Tracer(MemTraceClient(tracer.client.base_url, project=project))
    assert (
        again.prompt_version(("fact-extraction", EXTRACT_V1)).id
        == Prompt("fact-extraction", EXTRACT_V1).id
    )
    assert again.flush(30)
    again.close()
    attribute(http, project, cases[:2])

    listed = {p["name"]: p for p in http.get("/prompts", params={"project": project}).json()}
    assert sorted(listed) == ["answer", "fact-extraction"]
    [extract] = listed["fact-extraction"]["versions"]
    assert extract["label"] == "fact-extraction@1" and listed["fact-extraction"]["latest"] == (
        "fact-extraction@1"
    )
    assert (extract["operations"], extract["failures"]) == (3, 2)
    assert extract["failures_by_error_type"] == {"ExtractionError": 2}
    assert extract["failure_rate"] == pytest.approx(2 / 3, abs=1e-4)
    [answer] = listed["answer"]["versions"]
    assert (answer["operations"], answer["failures"], answer["failure_rate"]) == (3, 0, 0.0)

    detail = http.get("/prompts/fact-extraction", params={"project": project}).json()
    [v1] = detail["versions"]
    assert v1["text"] == EXTRACT_V1 and v1["placeholders"] == ["{conversation}"]
    assert v1["parent"] is None and v1["motivated_by"] == []
    # The operation consumes the version (first input) and names it in its attributes.
    rows = neo4j_driver.execute_query(
        "MATCH (o:Operation {project: $p, name: 'extract'})-[c:CONSUMES]->(u:Unit {kind: 'prompt'})"
        " RETURN c.position AS position, u.id AS id, o.attributes AS attrs",
        p=project,
    ).records
    assert {(r["position"], r["id"]) for r in rows} == {(0, extract["id"])}
    assert all(json.loads(r["attrs"])["prompt"] == extract["id"] for r in rows)

    missing = http.get("/prompts/nothing-here", params={"project": project})
    assert missing.status_code == 404 and missing.json()["error"] == "not_found"
    bad = http.get("/prompts/no%20spaces", params={"project": project})
    assert bad.status_code == 422 and bad.json()["details"][0]["loc"] == ["path", "name"]


def test_optimisation_stores_the_next_version_with_its_lineage_and_the_next_round_uses_it(
    tracer: Tracer,
    http: httpx.Client,
    project: str,
    llm: ScriptedLLM,
    neo4j_driver: Driver,
) -> None:
    cases = run_round(tracer, ("fact-extraction", EXTRACT_V1), 3, "b")
    attribute(http, project, cases)
    llm.script["answer"] = optimizer()  # type: ignore[attr-defined]
    before = len(llm.requests)

    answer = http.post(
        "/prompts/fact-extraction/optimize",
        params={"project": project},
        json={"batch_size": 2, "max_llm_calls": 10},
    )
    assert answer.status_code == 200, answer.text
    result = answer.json()
    assert result["text"] == f"{EXTRACT_V1}\n{ADDED_RULE}"
    assert result["new_label"] == "fact-extraction@2"
    assert f"+{ADDED_RULE}" in result["diff"]
    assert result["cases"] == sorted(cases) and len(result["feedback"]) == 3
    assert ADDED_RULE in result["feedback_summary"]
    # 3 feedback calls, 2 aggregation calls (batches of 2), 1 edit.
    assert result["cost"]["llm_calls"] == 6 == len(llm.requests) - before

    detail = http.get("/prompts/fact-extraction", params={"project": project}).json()
    v1, v2 = detail["versions"]
    assert (v2["id"], v2["parent"], v2["produced_by"]) == (
        result["new_version"],
        v1["id"],
        result["operation_id"],
    )
    assert v2["motivated_by"] == sorted(cases) and v2["operations"] == 0
    linked = neo4j_driver.execute_query(
        "MATCH (o:Operation {project: $p, id: $op})-[:USED]->(a:Attribution) "
        "RETURN a.case_id AS case_id, o.kind AS kind",
        p=project,
        op=result["operation_id"],
    ).records
    assert sorted(r["case_id"] for r in linked) == sorted(cases)
    assert {r["kind"] for r in linked} == {"optimization"}

    # The next round runs with the newest version, fetched from the service.
    newest = tracer.client.prompt("fact-extraction")
    assert (newest.text, newest.version, newest.id) == (v2["text"], "fact-extraction@2", v2["id"])
    run_round(tracer, newest, 1, "c")
    listed = {p["name"]: p for p in http.get("/prompts", params={"project": project}).json()}
    assert [v["operations"] for v in listed["fact-extraction"]["versions"]] == [3, 1]
    with pytest.raises(RequestFailed) as refused:
        tracer.client.prompt("nothing-here")
    assert refused.value.status == 404

    # The report shows each version's failure rate, before (v1) and after (v2).
    report = http.get("/report", params={"project": project}).json()
    rates = {v["label"]: v for v in report["prompt_versions"]}
    assert (rates["fact-extraction@1"]["failures"], rates["fact-extraction@1"]["failure_rate"]) == (
        3,
        1.0,
    )
    assert (rates["fact-extraction@2"]["operations"], rates["fact-extraction@2"]["failures"]) == (
        1,
        0,
    )
    page = http.get("/report.html", params={"project": project}).text
    assert "Prompt versions" in page and "fact-extraction@2" in page
    # The case view names the version the blamed operation ran with.
    case_page = http.get(f"/ui/cases/{cases[0]}", params={"project": project}).text
    assert '"prompt_versions":{' in case_page.replace(" ", "")
    assert "fact-extraction@1" in case_page and 'id="blamed-prompt"' in case_page


@pytest.mark.parametrize(
    ("edit", "why"),
    [
        ("Extract the facts. Answer as JSON.", "drops placeholders {conversation}"),
        ("   ", "empty prompt"),
        (EXTRACT_V1, "unchanged"),
        # The edit as asked, but cut at the output cap: the template lost its end.
        (Reply(f"{EXTRACT_V1}\nKeep every date and", "length"), "cut at its output limit"),
        (echo_of_the_request, "cut at its output limit"),
        (echo_of_the_instructions, "echoes the edit request"),
        (echo_of_the_labels, "echoes the edit request"),
        (echo_reworded, "echoes the edit request"),
        (THRICE, "repeats the current template: it holds it 3 times"),
        (LOOPING, "repeats itself"),
    ],
)
def test_a_refused_proposal_stores_nothing(
    tracer: Tracer,
    http: httpx.Client,
    project: str,
    llm: ScriptedLLM,
    neo4j_driver: Driver,
    edit: Edit,
    why: str,
) -> None:
    cases = run_round(tracer, ("fact-extraction", EXTRACT_V1), 1, "d")
    attribute(http, project, cases)
    llm.script["answer"] = optimizer(edit)  # type: ignore[attr-defined]
    count = DATA_NODES
    nodes = neo4j_driver.execute_query(count, p=project).records[0]["n"]

    before = len(llm.requests)
    answer = http.post("/prompts/fact-extraction/optimize", params={"project": project})
    assert answer.status_code == 422, answer.text
    assert why in answer.json()["message"] and "nothing stored" in answer.json()["message"]
    assert answer.json()["details"][0]["loc"][0] == "proposal"
    # Every request bounds its answer; the edit's cap is what a cut answer is measured by.
    caps = [body.get("max_tokens") for body in llm.requests[before:]]
    assert caps and all(isinstance(c, int) and c > 0 for c in caps), caps
    assert neo4j_driver.execute_query(count, p=project).records[0]["n"] == nodes
    assert_released(neo4j_driver, project)
    detail = http.get("/prompts/fact-extraction", params={"project": project}).json()
    assert len(detail["versions"]) == 1


def _edit_requests(llm: ScriptedLLM, since: int) -> int:
    return sum(
        str(r["messages"][0]["content"]).startswith("You edit a prompt")
        for r in llm.requests[since:]
    )


@pytest.mark.parametrize(
    ("stage", "loc", "what"),
    [
        ("You improve a prompt", "feedback", "the LLM's feedback from case"),
        ("You combine feedback", "feedback_summary", "the LLM's summary of feedback batch 1"),
    ],
)
def test_a_proposal_from_cut_input_is_refused_before_the_edit(
    tracer: Tracer,
    http: httpx.Client,
    project: str,
    llm: ScriptedLLM,
    neo4j_driver: Driver,
    stage: str,
    loc: str,
    what: str,
) -> None:
    """Feedback (or its summary) cut at its token limit is not input a proposal is made from:
    SmolLM2's "The prompt is: - [other]" ran to its cap and was edited into a version."""
    cases = run_round(tracer, ("fact-extraction", EXTRACT_V1), 2, "cut")
    attribute(http, project, cases)
    normal = optimizer()

    def cut_at(request: dict[str, Any]) -> str | Reply:
        said = normal(request)
        if str(request["messages"][0]["content"]).startswith(stage):
            return Reply("The prompt is: - [other] " * 400)  # past any cap: cut to "length"
        return said

    llm.script["answer"] = cut_at  # type: ignore[attr-defined]
    count = DATA_NODES
    nodes = neo4j_driver.execute_query(count, p=project).records[0]["n"]
    before = len(llm.requests)
    answer = http.post("/prompts/fact-extraction/optimize", params={"project": project})
    assert answer.status_code == 422, answer.text
    body = answer.json()
    assert body["message"].startswith(what) and "cut at its output limit" in body["message"]
    assert "nothing stored" in body["message"]
    assert body["details"][0]["loc"][0] == loc and body["details"][0]["loc"][-1] == "finish_reason"
    assert _edit_requests(llm, before) == 0  # refused before the edit was asked for
    assert neo4j_driver.execute_query(count, p=project).records[0]["n"] == nodes
    assert_released(neo4j_driver, project)
    detail = http.get("/prompts/fact-extraction", params={"project": project}).json()
    assert len(detail["versions"]) == 1


def no_to_everything(request: dict[str, Any]) -> str:
    """A judge saying no unit carries anything: 0.53 on the judge check, below the threshold."""
    ids = unit_ids_in_prompt(user_text(request))
    return json.dumps({"verdicts": dict.fromkeys(ids, False)})


def test_a_model_stood_down_by_its_judge_check_writes_no_version_unless_forced(
    tracer: Tracer, http: httpx.Client, project: str, llm: ScriptedLLM, llm_service: ServiceHandle
) -> None:
    attribute(http, project, run_round(tracer, ("fact-extraction", EXTRACT_V1), 1, "sd"))
    llm.script["answer"] = no_to_everything  # type: ignore[attr-defined]
    check = http.post("/judge/check", params={"project": project}, json={"record": True})
    assert check.status_code == 200 and check.json()["below_threshold"], check.text
    llm.script["answer"] = optimizer()  # type: ignore[attr-defined]

    before = len(llm.requests)
    refused = http.post("/prompts/fact-extraction/optimize", params={"project": project})
    assert refused.status_code == 422, refused.text
    why = f"model 'scripted' scored {check.json()['accuracy']:.2f} on judge check"
    assert refused.json()["message"].startswith(why)
    assert "stood down" in refused.json()["message"] and "force=true" in refused.json()["message"]
    assert refused.json()["details"][0]["loc"] == ["body", "force"]
    assert len(llm.requests) == before  # the model was not asked
    detail = http.get("/prompts/fact-extraction", params={"project": project}).json()
    assert len(detail["versions"]) == 1

    # Forced (here through the CLI, which sends force=true on the streamed request).
    forced = memtrace(
        "optimize", "fact-extraction", "--project", project, "--url", llm_service.url,
        "--force", "--json",
    )  # fmt: skip
    assert forced.returncode == 0, forced.stderr
    result = json.loads(forced.stdout)
    assert result["new_label"] == "fact-extraction@2"
    assert result["forced"].startswith(why) and "MEMTRACE_LLM_MIN_ACCURACY" in result["forced"]
    v1, v2 = http.get("/prompts/fact-extraction", params={"project": project}).json()["versions"]
    assert v1["forced"] is None and v2["forced"] == result["forced"]


def test_the_budget_is_never_exceeded(
    tracer: Tracer, http: httpx.Client, project: str, llm: ScriptedLLM
) -> None:
    cases = run_round(tracer, ("fact-extraction", EXTRACT_V1), 5, "e")
    attribute(http, project, cases)
    llm.script["answer"] = optimizer()  # type: ignore[attr-defined]

    # Calls: 5 cases cannot all be asked about in 4 calls; a transient 500 eats one more.
    before = len(llm.requests)
    llm.push_failure("500")
    result = http.post(
        "/prompts/fact-extraction/optimize",
        params={"project": project},
        json={"max_llm_calls": 4},
    )
    spent = llm.requests[before:]
    assert len(spent) <= 4
    assert result.status_code == 200, result.text
    assert result.json()["cost"]["llm_calls"] == len(spent)
    assert len(result.json()["feedback"]) == 1  # 1 feedback was affordable; the 500 took its slack

    # Tokens: the reported usage of every call stays within max_tokens, even when cut short
    # (each budget on a prompt of its own, whose newest version still has failures).
    for max_tokens in (1000, 1500, 2500):
        name = f"extract-{max_tokens}"
        attribute(http, project, run_round(tracer, (name, EXTRACT_V1), 2, name))
        before = len(llm.requests)
        answer = http.post(
            f"/prompts/{name}/optimize",
            params={"project": project},
            json={"max_tokens": max_tokens, "max_llm_calls": 50},
        )
        used = sum(_usage(body) for body in llm.requests[before:])
        assert used <= max_tokens, (max_tokens, used, answer.text)
        if answer.status_code == 422:
            assert "budget ran out" in answer.json()["message"]
        else:
            assert answer.status_code == 200, answer.text
            cost = answer.json()["cost"]
            assert cost["input_tokens"] + cost["output_tokens"] <= max_tokens


def _usage(request: dict[str, Any]) -> int:
    """Tokens the scripted server bills a request (its own rule: characters / 4)."""
    prompt = "".join(str(m.get("content") or "") for m in request.get("messages", []))
    return max(1, len(prompt) // 4) + 100  # generous bound for the short scripted answers


def test_optimisation_streams_its_progress_and_refuses_what_it_cannot_do(
    tracer: Tracer, http: httpx.Client, project: str, llm: ScriptedLLM
) -> None:
    nothing = http.post("/prompts/fact-extraction/optimize", params={"project": project})
    assert nothing.status_code == 404
    run_round(tracer, ("fact-extraction", EXTRACT_V1), 2, "f")
    unattributed = http.post("/prompts/fact-extraction/optimize", params={"project": project})
    assert unattributed.status_code == 422 and "attribute" in unattributed.json()["message"]
    bad = http.post(
        "/prompts/fact-extraction/optimize",
        params={"project": project},
        json={"max_llm_calls": 1, "error_types": ["NoSuchError"]},
    )
    assert bad.status_code == 422
    assert {tuple(d["loc"]) for d in bad.json()["details"]} == {
        ("body", "max_llm_calls"),
        ("body", "error_types", 0),
    }

    attribute(http, project, run_round(tracer, ("fact-extraction", EXTRACT_V1), 2, "g"))
    llm.script["answer"] = optimizer()  # type: ignore[attr-defined]
    with http.stream(
        "POST",
        "/prompts/fact-extraction/optimize",
        params={"project": project, "stream": "true"},
        json={"error_types": ["ExtractionError"]},
    ) as response:
        assert response.headers["content-type"].startswith("application/x-ndjson")
        events = [json.loads(line) for line in response.iter_lines() if line.strip()]
    stages = [(e["stage"], e["done"]) for e in events if e["event"] == "progress"]
    assert stages == [("feedback", 1), ("feedback", 2), ("aggregate", 1), ("edit", 0), ("edit", 1)]
    assert events[-1]["event"] == "result"
    assert events[-1]["result"]["new_label"] == "fact-extraction@2"


def test_cli_lists_prompts_and_optimises(
    tracer: Tracer, http: httpx.Client, project: str, llm: ScriptedLLM, llm_service: ServiceHandle
) -> None:
    attribute(http, project, run_round(tracer, ("fact-extraction", EXTRACT_V1), 2, "h"))
    llm.script["answer"] = optimizer()  # type: ignore[attr-defined]
    listed = memtrace("prompts", "--project", project, "--url", llm_service.url)
    assert listed.returncode == 0, listed.stderr
    assert "fact-extraction@1" in listed.stdout and "100.0%" in listed.stdout
    run = memtrace("optimize", "fact-extraction", "--project", project, "--url", llm_service.url)
    assert run.returncode == 0, run.stderr
    assert "fact-extraction@2" in run.stdout and ADDED_RULE in run.stdout
    assert "feedback: 2/2" in run.stderr
    unknown = memtrace("optimize", "nothing", "--project", project, "--url", llm_service.url)
    assert unknown.returncode == 1 and "no prompt 'nothing'" in unknown.stderr


@pytest.mark.parametrize(
    ("edit", "why"),
    [
        (echo_of_the_request, "cut at its output limit"),
        (echo_of_the_labels, "echoes the edit request"),
    ],
)
def test_cli_says_why_a_proposal_is_refused(
    tracer: Tracer,
    http: httpx.Client,
    project: str,
    llm: ScriptedLLM,
    llm_service: ServiceHandle,
    edit: Edit,
    why: str,
) -> None:
    attribute(http, project, run_round(tracer, ("fact-extraction", EXTRACT_V1), 1, "i"))
    llm.script["answer"] = optimizer(edit)  # type: ignore[attr-defined]
    run = memtrace("optimize", "fact-extraction", "--project", project, "--url", llm_service.url)
    assert run.returncode == 1, run.stdout
    assert why in run.stderr and "nothing stored" in run.stderr
    assert "fact-extraction@2" not in run.stdout + run.stderr
    detail = http.get("/prompts/fact-extraction", params={"project": project}).json()
    assert len(detail["versions"]) == 1


def test_otlp_system_instructions_are_prompt_versions(client: httpx.Client, project: str) -> None:
    from tests.support.otlp_export import as_otlp_json, export, messages, span

    instructions = "You answer from memory. Be brief."
    spans = [
        span(
            7,
            i + 1,
            "chat gpt-4.1",
            0.1 * i,
            attributes={
                "gen_ai.operation.name": "chat",
                "gen_ai.system_instructions": instructions,
                "gen_ai.input.messages": messages(("user", f"question {i}")),
                **({"memtrace.prompt.name": "answer"} if i else {}),
            },
        )
        for i in range(2)
    ]
    sent = client.post(
        "/otlp/v1/traces", params={"project": project}, json=as_otlp_json(export(*spans))
    )
    assert sent.status_code == 200, sent.text
    listed = {p["name"]: p for p in client.get("/prompts", params={"project": project}).json()}
    # Unnamed, a system prompt is a prompt of its own, named by its span and its text's hash
    # (two different texts are never versions of one name: ingest/otlp_identity.py).
    unnamed = sorted(set(listed) - {"answer"})
    assert len(unnamed) == 1 and unnamed[0].startswith("chat_gpt-4.1.system."), sorted(listed)
    assert listed["answer"]["versions"][0]["id"] == Prompt("answer", instructions).id
    assert [p["versions"][0]["operations"] for p in listed.values()] == [1, 1]


def test_a_prompt_name_must_be_path_safe() -> None:
    with pytest.raises(ValueError, match="prompt name"):
        Prompt("no spaces", "x").unit()
    assert Prompt("a", '{x} {{ y }} {"k": 1}').id.startswith("prompt:a@")
    from memtrace_client.prompts import placeholders

    assert placeholders('{x} and {{ y }} and {"facts": []} and {x}') == ["{x}", "{{ y }}"]


def test_mem0_prompt_config_names_the_entries_of_each_pipeline() -> None:
    from memtrace_client.adapters.mem0 import mem0_prompt_config

    newest = Prompt("fact-extraction", "Extract {x}", version="fact-extraction@2")
    assert mem0_prompt_config("1.0.11", extraction=newest, update=("memory-update", "U")) == {
        "custom_fact_extraction_prompt": "Extract {x}",
        "custom_update_memory_prompt": "U",
    }
    assert mem0_prompt_config("2.2.1", extraction="Keep dates.") == {
        "custom_instructions": "Keep dates."
    }
    with pytest.raises(ValueError, match="no memory-update prompt"):
        mem0_prompt_config("2.2.1", update="U")
