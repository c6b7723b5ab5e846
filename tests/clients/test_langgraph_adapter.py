"""The LangGraph store adapter on the real ``langgraph`` package, end to end.

A real ``StateGraph`` compiled with a traced ``InMemoryStore`` (its semantic index embeds with a
bag-of-words function, no model) remembers facts from user turns and answers questions from a
store search. Its "LLM" is plain Python: a script of what the extraction writes for each turn,
and an answerer that repeats the first fact it was given. The script makes one mistake of each
kind; the trace goes through the SDK into the running service and Neo4j, and
``POST /attribute`` must blame each wrong answer on the operation that made the mistake.
"""

from __future__ import annotations

import asyncio
import json
import runpy
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple, TypedDict

import httpx
from langgraph.graph import END, START, StateGraph
from langgraph.store.base import BaseStore, Item
from langgraph.store.memory import InMemoryStore
from memtrace_client import MemTraceClient, Tracer
from memtrace_client.adapters.langgraph import TracedStore, trace_store, value_text
from memtrace_client.models import UnitIn
from neo4j import Driver

from tests.support.attribution import assert_attributed
from tests.support.graph import read_by, recorded_operations
from tests.support.llm_server import bag_of_words_vector
from tests.support.servers import REPO, ServiceHandle

NS = ("memories", "alex")
Write = tuple[str, str, str | None]  # (put | delete, key, fact)

# What the extraction writes for each turn, mistakes included.
TURNS: list[tuple[str, list[Write]]] = [
    (
        "I work as a nurse at the city hospital.",
        [("put", "job", "The user works as a nurse at the city hospital.")],
    ),
    # The sister is never written: an ExtractionError.
    (
        "My sister Emma lives in Denver, and my favourite food is ramen.",
        [("put", "food", "The user's favourite food is ramen.")],
    ),
    (
        "I adopted a golden retriever named Biscuit.",
        [("put", "dog", "The user adopted a golden retriever named Biscuit.")],
    ),
    (
        "On Saturdays I volunteer at the animal shelter.",
        [("put", "saturdays", "On Saturdays the user volunteers at the animal shelter.")],
    ),
    # The move overwrites the job entry: an UpdateError.
    ("I moved to Portland last month.", [("put", "job", "The user moved to Portland.")]),
    # The old car goes, and the dog's entry with it: a DeletionError.
    (
        "My old car finally broke down, so I sold it.",
        [("delete", "dog", None), ("put", "car", "The user sold their old car.")],
    ),
    # A look-alike the search ranks above the shelter: a RetrievalError.
    (
        "What people do on Saturdays in Portland is too loud for me.",
        [("put", "noise", "The user finds what people do on Saturdays in Portland too loud.")],
    ),
]


def first_fact(context: str) -> str:
    """The honest answerer: the first fact it was given."""
    lines = [json.loads(line)["fact"] for line in context.splitlines() if line.strip()]
    return lines[0] if lines else "I do not know."


class Question(NamedTuple):
    text: str
    expected: str
    turn: int  # the turn that holds the answer (the case's evidence)
    error_type: str
    operation: str  # the name of the operation blamed
    culprit: str  # what that operation read: the turn that made the mistake, or the question
    answerer: Callable[[str], str]


def wrong_food(context: str) -> str:
    """The answerer misreading a context that names the food."""
    return "The user's favourite food is pizza."


SISTER, JOB, DOG = (
    "Where does the user's sister live?",
    "What does the user do for work?",
    "What is the name of the user's dog?",
)
SATURDAYS, FOOD = "What does the user do on Saturdays?", "What is the user's favourite food?"
QUESTIONS = [
    Question(SISTER, "Denver", 1, "ExtractionError", "langgraph.extract", TURNS[1][0], first_fact),
    Question(JOB, "nurse", 0, "UpdateError", "langgraph.put", TURNS[4][0], first_fact),
    Question(DOG, "Biscuit", 2, "DeletionError", "langgraph.delete", TURNS[5][0], first_fact),
    Question(
        SATURDAYS,
        "volunteers at the animal shelter",
        3,
        "RetrievalError",
        "langgraph.search",
        SATURDAYS,
        first_fact,
    ),
    Question(FOOD, "ramen", 1, "ResponseError", "answer", FOOD, wrong_food),
]


def embed(texts: list[str]) -> list[list[float]]:
    return [bag_of_words_vector(t, dims=256) for t in texts]


def indexed_store() -> InMemoryStore:
    return InMemoryStore(index={"dims": 256, "embed": embed, "fields": ["fact"]})


class State(TypedDict, total=False):
    turn: int
    question: str
    answer: str


def agent(store: TracedStore, messages: list[UnitIn], answers: dict[str, UnitIn]) -> Any:
    """A two-node graph: ``remember`` writes what the script extracts from a turn, ``recall``
    searches the store and answers. The store reaches the nodes the LangGraph way."""

    def remember(state: State, *, store: BaseStore) -> State:
        if "turn" not in state:
            return {}
        text, writes = TURNS[state["turn"]]
        message = store.tracer.message(text, role="user")  # type: ignore[attr-defined]
        messages.append(message)
        with store.extracting([message]):  # type: ignore[attr-defined]
            for action, key, fact in writes:
                if action == "put":
                    store.put(NS, key, {"fact": fact})
                else:
                    store.delete(NS, key)
        return {}

    def recall(state: State, *, store: BaseStore) -> State:
        if "question" not in state:
            return {}
        question = state["question"]
        store.search(NS, query=question, limit=1)
        answerer = next(q.answerer for q in QUESTIONS if q.text == question)
        unit = store.answer(answerer)  # type: ignore[attr-defined]
        answers[question] = unit
        return {"answer": unit.content}

    builder = StateGraph(State)
    builder.add_node("remember", remember)
    builder.add_node("recall", recall)
    builder.add_edge(START, "remember")
    builder.add_edge("remember", "recall")
    builder.add_edge("recall", END)
    return builder.compile(store=store)


def test_langgraph_agent_traced_and_each_error_type_attributed(
    service: ServiceHandle,
    client: httpx.Client,
    project: str,
    neo4j_driver: Driver,
    tmp_path: Path,
) -> None:
    tracer = Tracer(MemTraceClient(service.url, project=project), spool_dir=tmp_path)
    store = trace_store(indexed_store(), tracer)
    messages: list[UnitIn] = []
    answers: dict[str, UnitIn] = {}
    graph = agent(store, messages, answers)
    for turn in range(len(TURNS)):
        graph.invoke({"turn": turn})
    cases = {}
    for q in QUESTIONS:
        graph.invoke({"question": q.text})
        cases[q.text] = store.judge(
            q.text, q.expected, answers[q.text], evidence=[messages[q.turn]]
        )
    assert tracer.flush(60)

    recorded = recorded_operations(neo4j_driver, project)
    assert recorded[:6] == [
        ("langgraph.extract", "extraction", 1, 1),  # turn 0: the message -> one fact
        ("langgraph.put", "update", 1, 1),  # the fact -> the entry's first version
        ("langgraph.extract", "extraction", 1, 1),
        ("langgraph.put", "update", 1, 1),
        ("langgraph.extract", "extraction", 1, 1),
        ("langgraph.put", "update", 1, 1),
    ]
    assert ("langgraph.put", "update", 2, 1) in recorded  # the move: its fact and the old job
    assert ("langgraph.delete", "deletion", 2, 1) in recorded  # the turn and the dog's version
    assert recorded[-2:] == [
        ("langgraph.search", "retrieval", 2, 1),  # the query and the one version returned
        ("answer", "response", 2, 1),  # the query and the context
    ]
    contexts = dict(zip((q.text for q in QUESTIONS), _contexts(neo4j_driver, project), strict=True))
    assert "Saturdays in Portland" in contexts[SATURDAYS]  # the look-alike won the search
    assert "ramen" in contexts[FOOD]

    for q in QUESTIONS:
        result = assert_attributed(
            client, project, cases[q.text], (q.error_type, q.operation), label=q.text
        )
        # Not just any operation of that name: the one that made this mistake.
        assert q.culprit in read_by(neo4j_driver, project, result["operation"]["id"]), q.text


def _contexts(driver: Driver, project: str) -> list[str]:
    """The context units of the searches, in the order they ran."""
    rows = driver.execute_query(
        "MATCH (o:Operation {project: $p, name: 'langgraph.search'})-[:PRODUCES]->(c:Unit) "
        "RETURN c.content AS content ORDER BY o.ts",
        p=project,
    ).records
    return [r["content"] for r in rows]


def _seen(results: list[Any]) -> list[Any]:
    """What a caller sees of results, without the times each store stamps on its own items."""
    seen: list[Any] = []
    for r in results:
        if isinstance(r, Item):
            seen.append((tuple(r.namespace), r.key, r.value, getattr(r, "score", None)))
        elif isinstance(r, list):
            seen.append(_seen(r))
        else:
            seen.append(r)
    return seen


def _exercise(store: BaseStore) -> list[Any]:
    """Every public method of ``BaseStore``, sync and async, in one fixed sequence."""
    out: list[Any] = []
    store.put(NS, "job", {"fact": "The user works as a nurse."})
    store.put(NS, "food", {"fact": "The user's favourite food is ramen."})
    store.put(("memories", "sam"), "food", {"fact": "Sam likes pizza."}, index=False)
    store.put(NS, "job", {"fact": "The user moved to Portland."})
    out.append(store.get(NS, "job"))
    out.append(store.get(NS, "missing"))
    out.append(store.search(NS, query="What food does the user like?", limit=1))
    out.append(store.search(("memories",), filter={"fact": "Sam likes pizza."}))
    out.append(store.list_namespaces(prefix=("memories",)))
    store.delete(NS, "food")
    out.append(store.get(NS, "food"))
    out.append(store.batch([]))

    async def run() -> None:
        await store.aput(NS, "pet", {"fact": "The user has a dog."})
        out.append(await store.aget(NS, "pet"))
        out.append(await store.asearch(NS, query="dog"))
        await store.adelete(NS, "pet")
        out.append(await store.aget(NS, "pet"))
        out.append(await store.alist_namespaces())

    asyncio.run(run())
    out.append(store.search(NS))
    return _seen(out)


def test_traced_store_behaves_as_the_bare_store(
    service: ServiceHandle, project: str, neo4j_driver: Driver, tmp_path: Path
) -> None:
    bare = _exercise(indexed_store())
    tracer = Tracer(MemTraceClient(service.url, project=project), spool_dir=tmp_path)
    store = trace_store(indexed_store(), tracer)
    traced = _exercise(store)
    assert traced == bare
    assert bare[0][2] == {"fact": "The user moved to Portland."}  # the sequence did something
    store.put(NS, "city", {"fact": "The user lives in Portland."}, source=["I live in Portland."])
    assert store.get(NS, "city").value == {"fact": "The user lives in Portland."}  # type: ignore[union-attr]
    assert tracer.flush(30)

    # Sync and async calls alike were recorded (list_namespaces reads no memory: not recorded).
    rows = neo4j_driver.execute_query(
        "MATCH (o:Operation {project: $p}) RETURN o.name AS name, count(*) AS n",
        p=project,
    ).records
    assert {r["name"]: r["n"] for r in rows} == {
        "langgraph.put": 6,  # 4 sync, 1 async, 1 with a source
        "langgraph.delete": 2,
        "langgraph.get": 6,
        "langgraph.search": 4,
        "langgraph.extract": 1,  # the put with a source
    }


def test_concurrent_tasks_on_one_store_each_answer_from_their_own_search(
    service: ServiceHandle, project: str, neo4j_driver: Driver, tmp_path: Path
) -> None:
    """Two asyncio tasks share one traced store, each in its ``answering`` block: each
    searches, both wait until the other has searched too, then each answers. Each answer reads
    its own search, not the other's."""
    tracer = Tracer(MemTraceClient(service.url, project=project), spool_dir=tmp_path)
    store = trace_store(indexed_store(), tracer)
    store.put(NS, "job", {"fact": "The user works as a nurse."})
    store.put(NS, "food", {"fact": "The user's favourite food is ramen."})
    questions = {"job": "Who works as a nurse?", "food": "Whose favourite food is ramen?"}

    async def ask(question: str, both_searched: asyncio.Barrier) -> tuple[list[Item], UnitIn]:
        with store.answering():
            found = await store.asearch(NS, query=question, limit=1)
            await both_searched.wait()  # the other task searched in between
            return found, store.answer(lambda context: context)  # repeats what it was given

    async def run() -> list[tuple[list[Item], UnitIn]]:
        both_searched = asyncio.Barrier(2)
        return await asyncio.gather(*(ask(q, both_searched) for q in questions.values()))

    results = dict(zip(questions, asyncio.run(run()), strict=True))
    assert tracer.flush(30)
    for key, (found, answer) in results.items():
        assert [i.key for i in found] == [key]  # the searches found different entries
        assert answer.content == value_text(found[0].value)  # its own search's context only
    rows = neo4j_driver.execute_query(
        "MATCH (o:Operation {project: $p, name: 'answer'})-[:CONSUMES]->(q:Unit {kind: 'query'}) "
        "MATCH (o)-[:PRODUCES]->(a:Unit) RETURN a.content AS answer, collect(q.content) AS queries",
        p=project,
    ).records
    answered = {json.dumps(r["queries"]): r["answer"] for r in rows}
    assert answered == {
        json.dumps([questions[key]]): answer.content for key, (_, answer) in results.items()
    }


class Turn(TypedDict, total=False):
    question: str
    answer: str


def test_a_search_in_one_node_is_read_by_the_answer_in_the_next(
    service: ServiceHandle, project: str, neo4j_driver: Driver, tmp_path: Path
) -> None:
    """The usual graph: a ``retrieve`` node searches, a ``generate`` node answers. LangGraph runs
    each node in a context of its own; the answer still reads the search, sync and async."""
    tracer = Tracer(MemTraceClient(service.url, project=project), spool_dir=tmp_path)
    store = trace_store(indexed_store(), tracer)
    store.put(NS, "food", {"fact": "The user's favourite food is ramen."})

    def retrieve(state: Turn, *, store: BaseStore) -> Turn:
        store.search(NS, query=state["question"], limit=1)
        return {}

    def generate(state: Turn, *, store: BaseStore) -> Turn:
        return {"answer": store.answer(lambda context: context).content}

    builder = StateGraph(Turn)
    builder.add_node("retrieve", retrieve)
    builder.add_node("generate", generate)
    builder.add_edge(START, "retrieve")
    builder.add_edge("retrieve", "generate")
    builder.add_edge("generate", END)
    graph = builder.compile(store=store)
    said = graph.invoke({"question": "What food?"})["answer"]
    said_async = asyncio.run(graph.ainvoke({"question": "Which food?"}))["answer"]
    assert said == said_async == value_text({"fact": "The user's favourite food is ramen."})
    assert tracer.flush(30)
    rows = neo4j_driver.execute_query(
        "MATCH (o:Operation {project: $p, name: 'answer'})-[:CONSUMES]->(q:Unit {kind: 'query'}) "
        "RETURN q.content AS query ORDER BY query",
        p=project,
    ).records
    assert [r["query"] for r in rows] == ["What food?", "Which food?"]


def test_langgraph_example_runs_and_its_case_is_attributed(
    service: ServiceHandle, client: httpx.Client, project: str
) -> None:
    example = runpy.run_path(str(REPO / "examples" / "langgraph_store.py"))
    case_id = example["main"](service.url, project)
    assert_attributed(client, project, case_id, ("UpdateError", "langgraph.put"))
