"""LangMem's memory store manager traced as extractions, end to end, on the real ``langmem``.

A real ``StateGraph`` compiled with a traced ``InMemoryStore`` (its semantic index embeds with a
bag-of-words function, no model) hands each user turn to LangMem's memory store manager, which
searches the memories it holds and asks its model (through trustcall's tool calls) what to
insert, patch or remove, then writes that to the store; questions are answered from a store search
by the same model. The model is a real ``ChatOpenAI`` talking to the scripted OpenAI-compatible
server, whose script plays the part of the model: it answers trustcall's ``Memory`` /
``PatchDoc`` / ``RemoveDoc`` tools as a model would, making one mistake of each kind. The trace
goes through the SDK into the running service and Neo4j, and ``POST /attribute`` must blame each
wrong answer on the operation that made the mistake. Nothing may reach the network.
"""

from __future__ import annotations

import asyncio
import json
import re
import runpy
from pathlib import Path
from typing import Annotated, Any, NamedTuple, TypedDict

import httpx
import pytest
from langchain_core.messages import AnyMessage, HumanMessage, convert_to_messages
from langchain_core.runnables import RunnableConfig
from langchain_openai import ChatOpenAI
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore
from langmem import create_memory_manager, create_memory_store_manager
from memtrace_client import MemTraceClient, Tracer
from memtrace_client.adapters.langgraph import TracedStore, trace_store
from memtrace_client.adapters.langmem import TracedManager, trace_manager
from memtrace_client.models import UnitIn
from neo4j import Driver

from tests.support.attribution import assert_attributed
from tests.support.graph import read_by
from tests.support.llm_server import (
    Reply,
    ScriptedLLM,
    ToolCall,
    bag_of_words_vector,
    tool_names,
    user_text,
)
from tests.support.servers import REPO, ServiceHandle

USER = "alex"
NS = ("memories", USER)
CONFIG: RunnableConfig = {"configurable": {"langgraph_user_id": USER}}


class Insert(NamedTuple):
    """The model inserts a new memory (trustcall's ``Memory`` tool)."""

    content: str


class Patch(NamedTuple):
    """The model rewrites the memory that mentions ``about`` (``PatchDoc``)."""

    about: str
    content: str


class Remove(NamedTuple):
    """The model removes the memory that mentions ``about`` (``RemoveDoc``)."""

    about: str


# What the model makes of each user turn, mistakes included.
TURNS: list[tuple[str, list[Insert | Patch | Remove]]] = [
    ("I work as a nurse at the city hospital.", [Insert("The user works as a nurse.")]),
    # The sister is never written: an ExtractionError at langmem.extract.
    (
        "My sister Emma lives in Denver, and my favourite food is ramen.",
        [Insert("The user's favourite food is ramen.")],
    ),
    ("I adopted a golden retriever named Biscuit.", [Insert("The user's dog is Biscuit.")]),
    (
        "On Saturdays I volunteer at the animal shelter.",
        [Insert("On Saturdays the user volunteers at the animal shelter.")],
    ),
    # The move rewrites the job memory: an UpdateError at that langgraph.put.
    ("I moved to Portland last month.", [Patch("nurse", "The user moved to Portland.")]),
    # The old car goes, and the dog's memory with it: a DeletionError at langgraph.delete.
    (
        "My old car finally broke down, so I sold it.",
        [Remove("Biscuit"), Insert("The user sold their old car.")],
    ),
    # A look-alike the answer's search ranks above the shelter: a RetrievalError.
    (
        "What people do on Saturdays in Portland is too loud for me.",
        [Insert("The user finds what people do on Saturdays in Portland too loud.")],
    ),
]

SISTER, JOB, DOG = (
    "Where does the user's sister live?",
    "What does the user do for work?",
    "What is the name of the user's dog?",
)
SATURDAYS, FOOD = "What does the user do on Saturdays?", "What is the user's favourite food?"
MISREAD = {FOOD: "The user's favourite food is pizza."}  # the model misreads a good context


class Question(NamedTuple):
    text: str
    expected: str
    turn: int  # the turn that holds the answer (the case's evidence)
    error_type: str
    operation: str  # the name of the operation blamed
    culprit: str  # what that operation read: the turn that made the mistake, or the question


QUESTIONS = [
    Question(SISTER, "Denver", 1, "ExtractionError", "langmem.extract", TURNS[1][0]),
    Question(JOB, "nurse", 0, "UpdateError", "langgraph.put", TURNS[4][0]),
    Question(DOG, "Biscuit", 2, "DeletionError", "langgraph.delete", TURNS[5][0]),
    Question(
        SATURDAYS,
        "volunteers at the animal shelter",
        3,
        "RetrievalError",
        "langgraph.search",
        SATURDAYS,
    ),
    Question(FOOD, "ramen", 1, "ResponseError", "answer", FOOD),
]

INSTANCE = re.compile(r"<instance id=(\S+) schema_type=\"\w+\">\n(.*?)\n</instance>", re.S)
MEMORIES = re.compile(r"<memories>\n(.*?)\n</memories>\nQuestion: (.*)", re.S)


def _text(request: dict[str, Any]) -> str:
    return "\n".join(str(m.get("content") or "") for m in request.get("messages", []))


def _instance(request: dict[str, Any], about: str) -> str:
    """The id trustcall gave the existing memory that mentions ``about``, as a model reads it."""
    found = [i for i, content in INSTANCE.findall(_text(request)) if about in content]
    assert len(found) == 1, (about, _text(request))
    return found[0]


def _tool_call(request: dict[str, Any], action: Insert | Patch | Remove) -> ToolCall:
    if isinstance(action, Insert):
        return ToolCall("Memory", {"content": action.content})
    if isinstance(action, Patch):
        patch = {"op": "replace", "path": "/content", "value": action.content}
        return ToolCall(
            "PatchDoc",
            {
                "json_doc_id": _instance(request, action.about),
                "planned_edits": "Replace the content with the new information.",
                "patches": [patch],
            },
        )
    return ToolCall("RemoveDoc", {"json_doc_id": _instance(request, action.about)})


def model_script(request: dict[str, Any]) -> Reply:
    """The model: trustcall's extraction requests (they offer tools) are answered with the tool
    calls scripted for the turn in the session; answering requests with the first memory given,
    or a misreading."""
    if tool_names(request):
        session = user_text(request)
        turns = [actions for text, actions in TURNS if text in session]
        assert len(turns) == 1, session
        return Reply(tool_calls=tuple(_tool_call(request, a) for a in turns[0]))
    return answer_from_memories(request)


def answer_from_memories(request: dict[str, Any]) -> Reply:
    """The answering model: the first memory it was given, unless it misreads the question."""
    matched = MEMORIES.search(user_text(request))
    assert matched, user_text(request)
    context, question = matched.groups()
    if question in MISREAD:
        return Reply(MISREAD[question])
    facts = [json.loads(line)["content"]["content"] for line in context.splitlines() if line]
    return Reply(facts[0] if facts else "I do not know.")


def chat_model(llm: ScriptedLLM) -> ChatOpenAI:
    """A real ``ChatOpenAI`` talking to the scripted server."""
    return ChatOpenAI(model="gpt-4o-mini", base_url=llm.base_url, api_key="test", max_retries=0)


def embed(texts: list[str]) -> list[list[float]]:
    return [bag_of_words_vector(t, dims=256) for t in texts]


class State(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]
    question: str
    answer: UnitIn


def agent(manager: TracedManager, model: ChatOpenAI, store: TracedStore) -> Any:
    """``remember`` hands the turn to LangMem's manager, which finds the store in the graph;
    ``recall`` searches the store and has the model answer from what it found."""

    def remember(state: State, config: RunnableConfig) -> State:
        if state.get("messages"):
            manager.invoke({"messages": state["messages"]}, config)
        return {}

    def recall(state: State, config: RunnableConfig, *, store: BaseStore) -> State:
        if "question" not in state:
            return {}
        question = state["question"]
        namespace = ("memories", config["configurable"]["langgraph_user_id"])
        store.search(namespace, query=question, limit=1)

        def ask(context: str) -> str:
            prompt = f"Answer from these memories.\n<memories>\n{context}\n</memories>\n"
            return str(model.invoke(f"{prompt}Question: {question}").content)

        return {"answer": store.answer(ask)}  # type: ignore[attr-defined]

    builder = StateGraph(State)
    builder.add_node("remember", remember)
    builder.add_node("recall", recall)
    builder.add_edge(START, "remember")
    builder.add_edge("remember", "recall")
    builder.add_edge("recall", END)
    return builder.compile(store=store)


def test_langmem_manager_traced_and_each_error_type_attributed(
    service: ServiceHandle,
    client: httpx.Client,
    project: str,
    neo4j_driver: Driver,
    llm: ScriptedLLM,
    no_network: list[str],
    tmp_path: Path,
) -> None:
    llm.script["answer"] = model_script  # type: ignore[attr-defined]
    tracer = Tracer(MemTraceClient(service.url, project=project), spool_dir=tmp_path)
    index = {"dims": 256, "embed": embed, "fields": ["content.content"]}
    store = trace_store(InMemoryStore(index=index), tracer)  # type: ignore[arg-type]
    model = chat_model(llm)
    manager = trace_manager(
        create_memory_store_manager(
            model, namespace=("memories", "{langgraph_user_id}"), enable_deletes=True
        )
    )
    graph = agent(manager, model, store)

    turns: list[UnitIn] = []
    for text, _ in TURNS:
        said = graph.invoke({"messages": [HumanMessage(text)]}, CONFIG)["messages"][0]
        turns.append(store.message_unit(said))  # the unit the extraction consumed
    cases = {}
    for q in QUESTIONS:
        answer = graph.invoke({"question": q.text}, CONFIG)["answer"]
        cases[q.text] = store.judge(q.text, q.expected, answer, evidence=[turns[q.turn]])
    assert tracer.flush(60)
    assert no_network == []

    # What the store holds is what the scripted model decided, written by LangMem itself.
    held = sorted(item.value["content"]["content"] for item in store.search(NS, limit=20))
    assert held == sorted(
        [
            "The user moved to Portland.",
            "The user's favourite food is ramen.",
            "On Saturdays the user volunteers at the animal shelter.",
            "The user sold their old car.",
            "The user finds what people do on Saturdays in Portland too loud.",
        ]
    )

    # One extraction per manager call, each consuming its turn; the writes it made are its own.
    extractions = _ops(neo4j_driver, project, "langmem.extract")
    assert [(r["ins"], r["outs"]) for r in extractions] == [(1, 1)] * len(TURNS)
    assert [r["read"] for r in extractions] == [[text] for text, _ in TURNS]
    writes = {r["name"]: r for r in _writes(neo4j_driver, project)}
    assert writes["langgraph.put"]["sourced"] == writes["langgraph.put"]["n"] == 7
    assert writes["langgraph.delete"]["sourced"] == writes["langgraph.delete"]["n"] == 1
    # The manager's own searches are marked as its reads: each with the id of the extraction it
    # ran in (its query is that extraction's turn), every extraction has some, and the only
    # searches not marked are the answers' own, one per question.
    searches = _ops(neo4j_driver, project, "langgraph.search")
    turn_of = {r["id"]: r["read"][0] for r in extractions}
    marked = [r for r in searches if r["extraction"] is not None]
    assert all(turn_of[r["extraction"]] in r["read"][0] for r in marked), marked
    assert {r["extraction"] for r in marked} == set(turn_of)
    assert [r["read"] for r in searches if r["extraction"] is None] == [[q.text] for q in QUESTIONS]
    # ... and no answer read what a manager's search found.
    assert _searches_answers_read(neo4j_driver, project) == [None] * len(QUESTIONS)
    answers = _ops(neo4j_driver, project, "answer")
    assert [r["read"][0] for r in answers] == [q.text for q in QUESTIONS]
    assert all(r["ins"] == 2 for r in answers)  # the question and its one search's context

    for q in QUESTIONS:
        result = assert_attributed(
            client, project, cases[q.text], (q.error_type, q.operation), label=q.text
        )
        # Not just any operation of that name: the one that made this mistake.
        assert q.culprit in read_by(neo4j_driver, project, result["operation"]["id"]), q.text


def _ops(driver: Driver, project: str, name: str) -> list[dict[str, Any]]:
    """The operations of that name in the order they ran: what they read (by kind: messages
    and queries), how many units in and out, their id, and the extraction a read belongs to."""
    rows = driver.execute_query(
        "MATCH (o:Operation {project: $p, name: $name}) "
        "RETURN o.id AS id, COUNT { (o)-[:CONSUMES]->() } AS ins, "
        "COUNT { (o)-[:PRODUCES]->() } AS outs, "
        "[(o)-[:CONSUMES]->(u:Unit) WHERE u.kind IN ['message', 'query'] | u.content] AS read, "
        "o.attributes AS attributes ORDER BY o.ts",
        p=project,
        name=name,
    ).records
    return [
        {**r.data(), "extraction": json.loads(r["attributes"] or "{}").get("extraction")}
        for r in rows
    ]


def _searches_answers_read(driver: Driver, project: str) -> list[str | None]:
    """For each search whose context an answer consumed, the extraction it is marked with."""
    rows = driver.execute_query(
        "MATCH (s:Operation {project: $p, name: 'langgraph.search'})-[:PRODUCES]->(:Unit)"
        "<-[:CONSUMES]-(:Operation {name: 'answer'}) RETURN s.attributes AS attributes",
        p=project,
    ).records
    return [json.loads(r["attributes"] or "{}").get("extraction") for r in rows]


def _writes(driver: Driver, project: str) -> list[dict[str, Any]]:
    """Per kind of store write: how many, and how many consumed an extraction's fact or, for a
    deletion, the messages of the extraction it ran in."""
    rows = driver.execute_query(
        "MATCH (o:Operation {project: $p}) WHERE o.name IN ['langgraph.put', 'langgraph.delete'] "
        "RETURN o.name AS name, count(*) AS n, count(CASE WHEN EXISTS { "
        "(o)-[:CONSUMES]->(:Unit)<-[:PRODUCES]-(:Operation {name: 'langmem.extract'}) } OR "
        "EXISTS { (o)-[:CONSUMES]->(:Unit {kind: 'message'}) } THEN 1 END) AS sourced",
        p=project,
    ).records
    return [r.data() for r in rows]


def example_script(request: dict[str, Any]) -> Reply:
    """The model of the example: it keeps the food and drops the sister."""
    if tool_names(request):
        assert "My sister Emma lives in Denver" in user_text(request)
        return Reply(tool_calls=(ToolCall("Memory", {"content": "The user likes ramen."}),))
    return answer_from_memories(request)


def test_langmem_example_runs_and_its_case_is_attributed(
    service: ServiceHandle,
    client: httpx.Client,
    project: str,
    llm: ScriptedLLM,
    no_network: list[str],
) -> None:
    llm.script["answer"] = example_script  # type: ignore[attr-defined]
    model = chat_model(llm)
    example = runpy.run_path(str(REPO / "examples" / "langmem_manager.py"))
    case_id = example["main"](service.url, project, model)
    assert no_network == []
    assert_attributed(client, project, case_id, ("ExtractionError", "langmem.extract"))


CONCURRENT = {
    "sam": ("I work as a nurse at the city hospital.", "The user works as a nurse."),
    "kim": ("I adopted a golden retriever named Biscuit.", "The user's dog is Biscuit."),
}


def concurrent_script(request: dict[str, Any]) -> Reply:
    """The model of two conversations at once: one memory from each."""
    session = user_text(request)
    kept = [memory for said, memory in CONCURRENT.values() if said in session]
    assert len(kept) == 1, session
    return Reply(tool_calls=(ToolCall("Memory", {"content": kept[0]}),))


def test_concurrent_async_calls_each_own_their_writes(
    service: ServiceHandle,
    project: str,
    neo4j_driver: Driver,
    llm: ScriptedLLM,
    no_network: list[str],
    tmp_path: Path,
) -> None:
    """Two managers' calls in one event loop at once, an ``ainvoke`` and an ``await
    manager(messages)``: LangMem writes from ``asyncio.gather`` tasks, and each write is the
    extraction of the call that made it. The server holds each call's model reply until both
    calls' requests have arrived, so the calls did overlap (run one after the other, the first
    would get a 504 after the hold's timeout)."""
    llm.script["answer"] = concurrent_script  # type: ignore[attr-defined]
    tracer = Tracer(MemTraceClient(service.url, project=project), spool_dir=tmp_path)
    store = trace_store(InMemoryStore(), tracer)
    model = chat_model(llm)
    namespace = ("memories", "{langgraph_user_id}")
    manager = trace_manager(create_memory_store_manager(model, namespace=namespace, store=store))
    # ``await manager(messages)`` takes no config: this one's namespace names its user.
    kims = trace_manager(
        create_memory_store_manager(model, namespace=("memories", "kim"), store=store)
    )
    (sam_said, _), (kim_said, _) = CONCURRENT["sam"], CONCURRENT["kim"]

    async def both() -> None:
        await asyncio.gather(
            manager.ainvoke(
                {"messages": [HumanMessage(sam_said)]},
                {"configurable": {"langgraph_user_id": "sam"}},
            ),
            kims([HumanMessage(kim_said)]),
        )

    with llm.replies_held_until(2, timeout_s=10):
        asyncio.run(both())
    assert llm.max_in_flight == 2
    assert tracer.flush(60)
    assert no_network == []

    rows = neo4j_driver.execute_query(
        "MATCH (m:Unit {kind: 'message'})<-[:CONSUMES]-(e:Operation {name: 'langmem.extract'}) "
        "-[:PRODUCES]->(:Unit)<-[:CONSUMES]-(:Operation {name: 'langgraph.put'})-[:PRODUCES]->(v) "
        "WHERE e.project = $p RETURN m.content AS said, v.content AS kept, v.memory_id AS entry",
        p=project,
    ).records
    written = {r["said"]: (json.loads(r["kept"])["content"]["content"], r["entry"]) for r in rows}
    assert {said: kept for said, (kept, _) in written.items()} == dict(CONCURRENT.values())
    assert {entry.split("#")[0] for _, entry in written.values()} == {
        f"memories/{user}" for user in CONCURRENT
    }


def test_a_manager_on_an_untraced_store_is_refused(llm: ScriptedLLM) -> None:
    model = chat_model(llm)
    manager = trace_manager(create_memory_store_manager(model, store=InMemoryStore()))
    with pytest.raises(TypeError, match="untraced store"):
        manager.invoke({"messages": [HumanMessage("I collect stamps from Iceland.")]})
    assert not any("stamps from Iceland" in prompt for prompt in llm.prompts())  # never ran


def test_the_plain_memory_manager_in_an_extracting_block(
    service: ServiceHandle,
    project: str,
    neo4j_driver: Driver,
    llm: ScriptedLLM,
    no_network: list[str],
    tmp_path: Path,
) -> None:
    """``create_memory_manager`` writes nothing itself: the puts of what it returns, in the
    block docs/sdk.md shows, are one extraction of the messages it read."""
    llm.script["answer"] = concurrent_script  # type: ignore[attr-defined]
    tracer = Tracer(MemTraceClient(service.url, project=project), spool_dir=tmp_path)
    store = trace_store(InMemoryStore(), tracer)
    model = chat_model(llm)
    manager = create_memory_manager(model)
    messages = [HumanMessage(CONCURRENT["sam"][0], id="turn-1")]
    with store.extracting(messages, name="langmem.extract"):
        for memory in manager.invoke({"messages": messages}):
            store.put(NS, memory.id, memory.content.model_dump())
    assert tracer.flush(60)
    assert no_network == []

    rows = neo4j_driver.execute_query(
        "MATCH (m:Unit)<-[:CONSUMES]-(e:Operation {name: 'langmem.extract'})-[:PRODUCES]->(f) "
        "<-[:CONSUMES]-(:Operation {name: 'langgraph.put'})-[:PRODUCES]->(v) "
        "WHERE e.project = $p RETURN m.id AS message, v.content AS kept",
        p=project,
    ).records
    assert [(r["message"], json.loads(r["kept"])) for r in rows] == [
        (store.message_unit(messages[0]).id, {"content": CONCURRENT["sam"][1]})
    ]


def test_a_message_is_one_unit_as_a_dict_or_as_langchain_converts_it(
    service: ServiceHandle, project: str, tmp_path: Path
) -> None:
    """LangMem converts the dicts it is given into LangChain messages before the extraction
    reads them; naming a case's evidence with the dict must name the unit the extraction read."""
    tracer = Tracer(MemTraceClient(service.url, project=project), spool_dir=tmp_path)
    store = trace_store(InMemoryStore(), tracer)
    said = [
        {"role": "user", "content": "I moved to Lisbon.", "id": "m-1"},
        {"role": "assistant", "content": "Lisbon, noted.", "id": "m-2"},
    ]
    for given, converted in zip(said, convert_to_messages(said), strict=True):
        assert store.message_unit(given).id == store.message_unit(converted).id
    assert store.message_unit(said[0]).id != store.message_unit(said[1]).id
