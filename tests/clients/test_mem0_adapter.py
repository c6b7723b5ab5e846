"""The Mem0 adapter on the real ``mem0ai`` package, end to end.

Mem0 runs unchanged: its LLM and embedder are the ``openai`` clients it builds itself, pointed at
the scripted OpenAI-compatible server; its vector store is a local Qdrant (qdrant-client's
on-disk mode, no server); its history table a SQLite file. The trace goes through the client
SDK into the running service and Neo4j, and ``POST /attribute`` is asked to explain the wrong
answers.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import httpx
import pytest
from memtrace_client import MemTraceClient, Tracer
from memtrace_client.adapters.mem0 import TracedMemory, trace_mem0
from neo4j import Driver

from tests.support.attribution import assert_attributed
from tests.support.llm_server import ScriptedLLM, user_text
from tests.support.mem0_config import mem0_config
from tests.support.servers import REPO, ServiceHandle

CONVERSATION = [
    {"role": "user", "content": "My sister Ana moved to Porto last spring."},
    {"role": "assistant", "content": "Porto is lovely. Does she like it there?"},
    {"role": "user", "content": "She does. Also, I started learning the cello in 2021."},
]
ANSWER_PROMPT = "Answer {question} from these memories only: {memories}"
# What Mem0's extraction call "finds": the cello fact is dropped, an ExtractionError.
EXTRACTED = ["User's sister Ana moved to Porto last spring"]


def mem0_answer(request: dict[str, Any]) -> str:
    """The scripted LLM as Mem0 sees it: an extraction that misses one fact."""
    text = user_text(request)
    if "cello" in text or "Porto" in text:
        return json.dumps({"memory": [{"text": t} for t in EXTRACTED]})
    return json.dumps({"memory": []})


@pytest.fixture
def mem0_memory(llm: ScriptedLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("MEM0_TELEMETRY", "False")
    monkeypatch.setenv("MEM0_DIR", str(tmp_path / "mem0"))
    from mem0 import Memory

    llm.script["answer"] = mem0_answer  # type: ignore[attr-defined]
    memory = Memory.from_config(mem0_config(llm.base_url, str(tmp_path)))
    yield memory
    if hasattr(memory, "close"):
        memory.close()


def test_mem0_traced_end_to_end_and_attributed(
    mem0_memory: Any,
    service: ServiceHandle,
    client: httpx.Client,
    project: str,
    neo4j_driver: Driver,
    tmp_path: Path,
) -> None:
    memory: TracedMemory = trace_mem0(
        mem0_memory, MemTraceClient(service.url, project=project), spool_dir=str(tmp_path / "s")
    )
    added = memory.add(CONVERSATION, user_id="alex")
    assert [r["event"] for r in added["results"]] == ["ADD"]

    # Q1: the cello was never extracted, so search cannot find it.
    question = "What instrument did the user start learning in 2021?"
    found = memory.search(question, filters={"user_id": "alex"}, top_k=3)
    assert "cello" not in json.dumps(found["results"])
    wrong = memory.answer(found, "The user is learning the piano.")
    extraction_case = memory.judge(question, "cello", wrong)

    # Q2: the Porto memory is retrieved, yet the answer ignores it: a ResponseError.
    question2 = "Where did Ana move?"
    found2 = memory.search(question2, filters={"user_id": "alex"}, top_k=3)
    assert "Porto" in json.dumps(found2["results"])
    wrong2 = memory.answer(
        found2, lambda context: "Ana moved to Lisbon.", prompt=("answer", ANSWER_PROMPT)
    )
    response_case = memory.judge(question2, "Porto", wrong2)
    assert memory.tracer.flush(60)

    ops = neo4j_driver.execute_query(
        "MATCH (o:Operation {project: $p}) RETURN o.name AS name, o.kind AS kind, "
        "o.attributes AS attrs, COUNT { (o)-[:CONSUMES]->() } AS ins, "
        "COUNT { (o)-[:PRODUCES]->() } AS outs",
        p=project,
    ).records
    by_name: dict[str, list[Any]] = {}
    for r in ops:
        by_name.setdefault(r["name"], []).append(r)
    assert sorted(by_name) == ["answer", "mem0.add_memory", "mem0.extract_facts", "mem0.search"]
    extract = by_name["mem0.extract_facts"][0]
    # Three messages and the version of Mem0's extraction prompt it ran with.
    assert (extract["kind"], extract["ins"], extract["outs"]) == ("extraction", 4, 1)
    attrs = json.loads(extract["attrs"])
    assert attrs["prompt"].startswith("prompt:fact-extraction@")
    assert attrs["pipeline"] == "add-only" and attrs["mem0_version"].startswith("2.")
    add = by_name["mem0.add_memory"][0]
    assert (add["kind"], add["ins"], add["outs"]) == ("update", 1, 1)
    assert json.loads(add["attrs"])["event"] == "ADD"
    memory_units = neo4j_driver.execute_query(
        "MATCH (u:Unit {project: $p, kind: 'memory'})<-[:PRODUCES]-(:Operation "
        "{name: 'mem0.add_memory'}) RETURN u.content AS content, u.attributes AS attrs",
        p=project,
    ).records
    assert [r["content"] for r in memory_units] == EXTRACTED
    mem_id = json.loads(memory_units[0]["attrs"])["memory_id"]
    assert mem_id == added["results"][0]["id"]  # the same entry Mem0 stored
    searches = by_name["mem0.search"]
    assert len(searches) == 2 and all(s["kind"] == "retrieval" for s in searches)

    prompts = {
        r["name"]: r["text"]
        for r in neo4j_driver.execute_query(
            "MATCH (o:Operation {project: $p})-[:CONSUMES]->(u:Unit {kind: 'prompt'}) "
            "RETURN DISTINCT o.name AS name, u.content AS text",
            p=project,
        ).records
    }
    assert prompts["answer"] == ANSWER_PROMPT
    from mem0.configs.prompts import ADDITIVE_EXTRACTION_PROMPT  # Mem0 2.x's own

    assert prompts["mem0.extract_facts"] == ADDITIVE_EXTRACTION_PROMPT
    assert_attributed(client, project, extraction_case, ("ExtractionError", "mem0.extract_facts"))
    assert_attributed(client, project, response_case, ("ResponseError", "answer"))


def test_mem0_skipped_duplicates_are_recorded(
    mem0_memory: Any, service: ServiceHandle, project: str, neo4j_driver: Driver, tmp_path: Path
) -> None:
    tracer = Tracer(MemTraceClient(service.url, project=project), spool_dir=tmp_path / "s")
    memory = trace_mem0(mem0_memory, tracer)
    memory.add(CONVERSATION, user_id="sam")
    again = memory.add(CONVERSATION, user_id="sam")  # Mem0 2.x skips the same fact by its MD5
    assert again["results"] == []
    assert tracer.flush(60)
    events = [
        json.loads(r["attrs"])["event"]
        for r in neo4j_driver.execute_query(
            "MATCH (o:Operation {project: $p, name: 'mem0.add_memory'}) "
            "RETURN o.attributes AS attrs ORDER BY o.ts",
            p=project,
        ).records
    ]
    assert events == ["ADD", "SKIP_DUPLICATE"]


CLASSIC_PYTHON = REPO / ".venv-mem0-classic" / "bin" / "python"
DECIDE_MARKER = "The new retrieved facts are mentioned in the triple backticks"


def classic_answer(request: dict[str, Any]) -> str:
    """Mem0 1.x's two calls: fact extraction ({"facts"}), then the ADD/UPDATE/DELETE/NONE
    decision ({"memory"}). The decision wrongly deletes the job when the cat is mentioned."""
    text = user_text(request)
    if DECIDE_MARKER not in text:
        if "Initech" in text:
            return json.dumps({"facts": ["Works at Initech as a data analyst"]})
        return json.dumps({"facts": ["Has a cat named Miso"]})
    if "Current memory is empty" in text:  # the first fact is new
        return json.dumps(
            {"memory": [{"id": "0", "text": "Works at Initech as a data analyst", "event": "ADD"}]}
        )
    if "Has a cat named Miso" in text and "Works at Initech" in text:
        return json.dumps(
            {
                "memory": [
                    {"id": "0", "text": "Works at Initech as a data analyst", "event": "DELETE"},
                    {"id": "1", "text": "Has a cat named Miso", "event": "ADD"},
                ]
            }
        )
    return json.dumps({"memory": [{"id": "0", "text": "Has a cat named Miso", "event": "NONE"}]})


def test_mem0_classic_pipeline_traced_and_deletion_attributed(
    llm: ScriptedLLM,
    service: ServiceHandle,
    client: httpx.Client,
    project: str,
    neo4j_driver: Driver,
    tmp_path: Path,
) -> None:
    assert CLASSIC_PYTHON.exists(), "run `make install`: it builds .venv-mem0-classic"
    llm.script["answer"] = classic_answer  # type: ignore[attr-defined]
    run = subprocess.run(
        [
            str(CLASSIC_PYTHON),
            "tests/support/mem0_classic_run.py",
            service.url,
            project,
            llm.base_url,
            str(tmp_path),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    out = json.loads(run.stdout.strip().splitlines()[-1])
    assert out["version"].startswith("1.") and out["pipeline"] == "classic"
    assert out["events"] == [["ADD"], ["DELETE", "ADD"], []]
    assert out["delivered"] is True

    rows = neo4j_driver.execute_query(
        "MATCH (o:Operation {project: $p}) RETURN o.name AS name, o.kind AS kind, "
        "o.attributes AS attrs ORDER BY o.ts",
        p=project,
    ).records
    changes = [
        (r["name"], r["kind"], json.loads(r["attrs"])["event"])
        for r in rows
        if r["name"].startswith(("mem0.add", "mem0.update", "mem0.delete"))
    ]
    assert changes == [
        ("mem0.add_memory", "update", "ADD"),
        ("mem0.delete_memory", "deletion", "DELETE"),
        ("mem0.add_memory", "update", "ADD"),
        ("mem0.update_memory", "update", "NONE"),
    ]
    assert {json.loads(r["attrs"])["pipeline"] for r in rows if r["name"].startswith("mem0")} == {
        "classic"
    }
    deleted = neo4j_driver.execute_query(
        "MATCH (o:Operation {project: $p, name: 'mem0.delete_memory'})-[:CONSUMES]->(old:Unit), "
        "(o)-[:PRODUCES]->(t:Unit) RETURN old.content AS old, t.kind AS kind",
        p=project,
    ).records
    assert ("Works at Initech as a data analyst", "tombstone") in {
        (r["old"], r["kind"]) for r in deleted
    }

    # Every change the decision call made ran with Mem0's memory-update prompt (its default).
    decided = neo4j_driver.execute_query(
        "MATCH (o:Operation {project: $p})-[:CONSUMES]->(u:Unit {kind: 'prompt'}) "
        "RETURN o.name AS name, u.id AS id, u.content AS text",
        p=project,
    ).records
    update_versions = {r["id"] for r in decided if r["name"] != "mem0.extract_facts"}
    assert len(update_versions) == 1 and next(iter(update_versions)).startswith(
        "prompt:memory-update@"
    )
    assert {r["name"] for r in decided} == {
        "mem0.extract_facts",
        "mem0.add_memory",
        "mem0.delete_memory",
        "mem0.update_memory",
    }
    assert all(
        "smart memory manager" in r["text"] for r in decided if r["name"] != "mem0.extract_facts"
    )
    assert_attributed(client, project, out["case"], ("DeletionError", "mem0.delete_memory"))
