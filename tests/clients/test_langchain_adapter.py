"""The LangChain adapter on the real ``langchain-core``, end to end: a chat history and an
in-memory vector store retriever, with the answering call made by a traced ``openai`` client
against the scripted OpenAI-compatible server; the trace goes through the SDK into the running
service and Neo4j."""

from __future__ import annotations

from urllib.parse import quote

import httpx
import openai
from langchain_core.chat_history import InMemoryChatMessageHistory
from langchain_core.embeddings import Embeddings
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.vectorstores import InMemoryVectorStore
from memtrace_client import MemTraceClient, Tracer
from memtrace_client.adapters.langchain import MemTraceCallbackHandler, TracedChatMessageHistory
from memtrace_client.adapters.openai import trace_openai

from tests.support.llm_server import ScriptedLLM, bag_of_words_vector
from tests.support.servers import ServiceHandle

NOTES = ["Ana, the user's sister, moved to Porto last spring.", "The user plays the cello."]
QUESTION = "Where does my sister live?"


class BagOfWords(Embeddings):
    """Deterministic embeddings (the scripted server's): texts sharing words are near."""

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [bag_of_words_vector(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return bag_of_words_vector(text)


def test_langchain_retrieval_and_history_with_lineage(
    llm: ScriptedLLM, service: ServiceHandle, client: httpx.Client, project: str
) -> None:
    llm.script["answer"] = lambda request: "She lives in Lisbon."  # type: ignore[attr-defined]
    tracer = Tracer(MemTraceClient(service.url, project=project), system="toy-agent")
    handler = MemTraceCallbackHandler(tracer, session_id="s1")
    model = trace_openai(openai.OpenAI(base_url=llm.base_url, api_key="k"), tracer)

    history = TracedChatMessageHistory(InMemoryChatMessageHistory(), tracer, session_id="s1")
    history.add_messages(
        [HumanMessage("Remember my sister, please."), AIMessage("I will remember her.")]
    )
    assert [m.content for m in history.messages] == [
        "Remember my sister, please.",
        "I will remember her.",
    ]

    store = InMemoryVectorStore(embedding=BagOfWords())
    notes = [tracer.memory(text) for text in NOTES]  # what the store holds, recorded
    store.add_texts(NOTES)
    retriever = store.as_retriever(search_kwargs={"k": 1})
    [document] = retriever.invoke(
        "Where does Ana, my sister, live?", config={"callbacks": [handler]}
    )
    assert document.page_content == NOTES[0]

    said = "\n".join(str(m.content) for m in history.messages)
    model.chat.completions.create(
        model="scripted",
        messages=[
            {"role": "system", "content": f"Notes: {document.page_content}\nChat:\n{said}"},
            {"role": "user", "content": QUESTION},
        ],
        memtrace_name="answer",
    )
    case = tracer.case(QUESTION, "Porto", verdict="failed")
    assert tracer.flush()

    graph = client.get(
        f"/cases/{quote(case, safe='')}/subgraph", params={"project": project}
    ).json()
    ops = {n["id"]: n for n in graph["nodes"] if n["type"] == "operation"}
    by_name = {op["name"]: op_id for op_id, op in ops.items()}
    edges = {(e["type"], e["operation"], e["unit"]) for e in graph["edges"]}
    retrieval = by_name["langchain.retriever.VectorStoreRetriever"]
    assert ops[retrieval]["kind"] == "retrieval"
    # The retrieval read the stored note and handed a context to the answering call ...
    assert ("CONSUMES", retrieval, notes[0].id) in edges
    [context] = [u for kind, op, u in edges if kind == "PRODUCES" and op == retrieval]
    assert ("CONSUMES", by_name["answer"], context) in edges
    # ... which also read the history's entries, written by add_messages from the messages.
    written = by_name["langchain.history.add_messages"]
    entries = [u for kind, op, u in edges if kind == "PRODUCES" and op == written]
    assert len(entries) == 2
    assert all(("CONSUMES", by_name["answer"], u) in edges for u in entries)
    units = {n["id"]: n for n in graph["nodes"] if n["type"] == "unit"}
    assert {units[u]["attributes"]["memory_id"] for u in entries} == {"s1#0", "s1#1"}

    history.clear()
    assert tracer.flush()
    cleared = client.post(
        "/cypher",
        json={
            "query": "MATCH (o:Operation {project: $project, kind: 'deletion'})-[:PRODUCES]->"
            "(u:Unit) RETURN o.name, u.kind, u.memory_id ORDER BY u.memory_id"
        },
        params={"project": project},
    ).json()["rows"]
    assert cleared == [
        ["langchain.history.clear", "tombstone", "s1#0"],
        ["langchain.history.clear", "tombstone", "s1#1"],
    ]
    tracer.close()
