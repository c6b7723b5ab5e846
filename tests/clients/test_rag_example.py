"""The plain RAG reference example (``memtrace_client.adapters.rag``), end to end.

Embeddings and answers come from the real ``openai`` client talking to the scripted server; the
trace goes through the SDK into the service; attribution must blame the retrieval that chose a
look-alike chunk over the one holding the answer.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
from memtrace_client import MemTraceClient, Tracer
from memtrace_client.adapters.rag import TracedRAG, split_words
from neo4j import Driver
from openai import OpenAI

from tests.support.graph import recorded_operations
from tests.support.llm_server import ScriptedLLM
from tests.support.servers import ServiceHandle


def test_split_words_keeps_every_word_in_order() -> None:
    text = " ".join(f"w{i}" for i in range(10))
    assert split_words(text, 4) == ["w0 w1 w2 w3", "w4 w5 w6 w7", "w8 w9"]
    assert split_words("", 4) == [""]


def test_rag_example_traced_and_retrieval_error_attributed(
    llm: ScriptedLLM,
    service: ServiceHandle,
    client: httpx.Client,
    project: str,
    neo4j_driver: Driver,
    tmp_path: Path,
) -> None:
    llm.script["answer"] = lambda request: "I do not know which city that was."  # type: ignore[attr-defined]
    openai = OpenAI(base_url=llm.base_url, api_key="test-key")

    def embed(texts: list[str]) -> list[list[float]]:
        response = openai.embeddings.create(model="scripted-embeddings", input=texts)
        return [d.embedding for d in response.data]

    def generate(question: str, context: str) -> str:
        messages: Any = [{"role": "user", "content": f"{context}\n\nQ: {question}"}]
        reply = openai.chat.completions.create(model="scripted", messages=messages)
        return reply.choices[0].message.content or ""

    tracer = Tracer(MemTraceClient(service.url, project=project), spool_dir=tmp_path)
    rag = TracedRAG(tracer, embed=embed, generate=generate, top_k=1)
    rag.remember("Hi! I am Alex and I love hiking on weekends.")
    fact = rag.remember("In spring we relocated to Lisbon, near the river.")
    rag.remember("The user said the city the user lived in before 2020 was too loud.")
    question = "Which city did the user move to in 2020?"
    answer = rag.ask(question)
    case_id = rag.judge(question, "Lisbon", answer, evidence=[fact])
    assert tracer.flush(30)

    recorded = recorded_operations(neo4j_driver, project)
    assert recorded == [
        ("rag.chunk", "extraction", 1, 1),
        ("rag.chunk", "extraction", 1, 1),
        ("rag.chunk", "extraction", 1, 1),
        ("rag.retrieve", "retrieval", 2, 1),  # the query and the one chunk chosen
        ("rag.answer", "response", 2, 1),
    ]
    context = neo4j_driver.execute_query(
        "MATCH (:Operation {project: $p, name: 'rag.retrieve'})-[:PRODUCES]->(c:Unit) "
        "RETURN c.content AS content",
        p=project,
    ).records[0]["content"]
    assert "Lisbon" not in context  # the look-alike chunk won

    result = client.post(f"/attribute/{case_id}", params={"project": project}).json()
    assert result["status"] == "attributed", json.dumps(result)
    assert (result["error_type"], result["operation"]["name"]) == (
        "RetrievalError",
        "rag.retrieve",
    )
