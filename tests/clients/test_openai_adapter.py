"""The OpenAI adapter on the real ``openai`` client, end to end: its calls go to the scripted
OpenAI-compatible server, the trace through the SDK into the running service and Neo4j."""

from __future__ import annotations

import asyncio
import json
from typing import Any
from urllib.parse import quote

import httpx
import openai
from memtrace_client import MemTraceClient, Tracer
from memtrace_client.adapters.openai import output_unit, trace_openai

from tests.support.cli import memtrace
from tests.support.llm_server import ScriptedLLM, user_text
from tests.support.servers import ServiceHandle

TURN = "I moved to Lisbon last May, after six years in Porto."
FACT = "The user lives in Porto"  # what the extraction call wrongly keeps


def scripted(request: dict[str, Any]) -> str:
    if "Extract" in str(request["messages"][0]["content"]):
        return FACT
    return "You live in Porto." if "Where do I live?" in user_text(request) else "ok"


def subgraph(client: httpx.Client, project: str, case: str) -> dict[str, Any]:
    response = client.get(f"/cases/{quote(case, safe='')}/subgraph", params={"project": project})
    assert response.status_code == 200, response.text
    return response.json()


def test_openai_calls_are_operations_with_lineage(
    llm: ScriptedLLM, service: ServiceHandle, client: httpx.Client, project: str
) -> None:
    llm.script["answer"] = scripted  # type: ignore[attr-defined]
    tracer = Tracer(MemTraceClient(service.url, project=project), system="toy-agent")
    model = trace_openai(openai.OpenAI(base_url=llm.base_url, api_key="k"), tracer)
    assert trace_openai(model, tracer) is model  # instrumenting twice changes nothing

    turn = tracer.message(TURN, role="user")
    extracted = model.chat.completions.create(
        model="scripted",
        messages=[
            {"role": "system", "content": "Extract the facts about the user."},
            {"role": "user", "content": TURN},
        ],
        memtrace_name="extract_facts",
        memtrace_kind="extraction",
    )
    fact = extracted.choices[0].message.content
    assert fact == FACT  # the call itself is unchanged
    vectors = model.embeddings.create(model="scripted-embeddings", input=[fact])
    assert len(vectors.data[0].embedding) == 64
    answer = model.chat.completions.create(
        model="scripted",
        messages=[
            {"role": "system", "content": f"What you remember:\n- {fact}"},
            {"role": "user", "content": "Where do I live?"},
        ],
        memtrace_name="answer",
    )
    assert answer.choices[0].message.content == "You live in Porto."
    case = tracer.case("Where do I live?", "Lisbon", verdict="failed")
    assert tracer.flush()

    graph = subgraph(client, project, case)
    ops = {n["id"]: n for n in graph["nodes"] if n["type"] == "operation"}
    units = {n["id"]: n for n in graph["nodes"] if n["type"] == "unit"}
    by_name = {op["name"]: op_id for op_id, op in ops.items()}
    assert {"extract_facts", "answer"} <= set(by_name)
    consumed = {(e["operation"], e["unit"]) for e in graph["edges"] if e["type"] == "CONSUMES"}
    produced = {(e["operation"], e["unit"]) for e in graph["edges"] if e["type"] == "PRODUCES"}
    memory = next(u for u, n in units.items() if n["kind"] == "memory")
    assert units[memory]["content"] == FACT
    # The answer read the memory the extraction wrote (its text was in the system prompt) ...
    assert (by_name["extract_facts"], memory) in produced
    assert (by_name["answer"], memory) in consumed
    # ... and the extraction read the message recorded before the call, not a copy of it.
    assert (by_name["extract_facts"], turn.id) in consumed
    assert ops[by_name["answer"]]["kind"] == "response"
    assert ops[by_name["extract_facts"]]["attributes"]["model"] == "scripted"
    # The operation is the traced system's; the model's vendor is in its attributes.
    assert ops[by_name["extract_facts"]]["system"] == "toy-agent"
    assert ops[by_name["extract_facts"]]["attributes"]["provider"] == "openai"

    stored = client.get("/cases", params={"project": project, "verdict": "failed"}).json()
    assert [c["id"] for c in stored] == [case]
    embedding = client.post(
        "/cypher",
        json={
            "query": "MATCH (o:Operation {project: $project, kind: 'embedding'})-[:CONSUMES]->"
            "(u:Unit) RETURN o.name AS name, u.id AS unit"
        },
        params={"project": project},
    )
    assert embedding.status_code == 200, embedding.text
    assert embedding.json()["rows"] == [["openai.embeddings", memory]]
    tracer.close()


def test_async_openai_calls_are_recorded(
    llm: ScriptedLLM, service: ServiceHandle, client: httpx.Client, project: str
) -> None:
    llm.script["answer"] = scripted  # type: ignore[attr-defined]
    tracer = Tracer(MemTraceClient(service.url, project=project))
    model = trace_openai(openai.AsyncOpenAI(base_url=llm.base_url, api_key="k"), tracer)

    async def ask() -> tuple[str, str]:
        response = await model.chat.completions.create(
            model="scripted", messages=[{"role": "user", "content": "Where do I live?"}]
        )
        # The answer the tracer keeps is this task's: the case is made in the same task.
        return str(response.choices[0].message.content), tracer.case("Where do I live?", "Lisbon")

    said, case = asyncio.run(ask())
    assert said == "You live in Porto."
    assert tracer.flush()
    graph = subgraph(client, project, case)
    [op] = [n for n in graph["nodes"] if n["type"] == "operation"]
    assert (op["name"], op["kind"]) == ("openai.chat.scripted", "response")
    tracer.close()


def test_the_next_step_consumes_a_calls_output_and_show_draws_the_blamed_call(
    llm: ScriptedLLM, service: ServiceHandle, client: httpx.Client, project: str
) -> None:
    llm.script["answer"] = scripted  # type: ignore[attr-defined]
    tracer = Tracer(MemTraceClient(service.url, project=project), system="toy-agent")
    model = trace_openai(openai.OpenAI(base_url=llm.base_url, api_key="k"), tracer)

    tracer.message(TURN, role="user")
    extracted = model.chat.completions.create(
        model="scripted",
        messages=[
            {"role": "system", "content": "Extract the facts about the user."},
            {"role": "user", "content": TURN},
        ],
        memtrace_name="extract_facts",
        memtrace_kind="extraction",
    )
    fact = str(extracted.choices[0].message.content)
    # The next step consumes the call's output by its handle, and writes the memory entry.
    with tracer.operation("store_memory", kind="update", inputs=[output_unit(extracted)]) as op:
        stored = tracer.memory(fact, memory_id="home")
        op.output(stored)
    answer = model.chat.completions.create(
        model="scripted",
        messages=[
            {"role": "system", "content": f"What you remember:\n- {fact}"},
            {"role": "user", "content": "Where do I live?"},
        ],
        memtrace_name="answer",
    )
    case = tracer.case("Where do I live?", "Lisbon", verdict="failed")
    assert tracer.flush()
    tracer.close()

    graph = subgraph(client, project, case)
    names = {n["id"]: n["name"] for n in graph["nodes"] if n["type"] == "operation"}
    edges = {(e["type"], names[e["operation"]], e["unit"]) for e in graph["edges"]}
    assert ("PRODUCES", "extract_facts", output_unit(extracted)) in edges
    assert ("CONSUMES", "store_memory", output_unit(extracted)) in edges
    assert ("CONSUMES", "answer", stored.id) in edges
    assert ("PRODUCES", "answer", output_unit(answer)) in edges

    url = ("--project", project, "--url", service.url)
    attributed = memtrace("attribute", case, *url, "--json")
    assert attributed.returncode == 0, attributed.stderr
    [result] = json.loads(attributed.stdout)
    assert result["operation"]["name"] == "extract_facts", result
    shown = memtrace("show", case, *url)
    assert shown.returncode == 0, shown.stderr
    blamed = result["operation"]["id"]
    assert f"by extract_facts (extraction, {blamed})" in shown.stdout
    tree = shown.stdout.split("what the answer depends on")[1]
    assert f"extract_facts ({blamed})" in tree  # the blamed call is drawn in the tree
    assert "store_memory" in tree and output_unit(extracted) in tree
