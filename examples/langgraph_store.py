"""A LangGraph agent whose memory store is traced by MemTrace (needs ``langgraph``).

    python examples/langgraph_store.py [http://127.0.0.1:8000]

A two-node graph remembers facts from a user turn and answers from a store search. Its "LLM" is
two plain functions, and the extraction makes one mistake: the move overwrites the job entry.
The question about the job then fails, and MemTrace blames that put (an UpdateError).
"""

import sys
from typing import TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore
from memtrace_client import MemTraceClient
from memtrace_client.adapters.langgraph import TracedStore, trace_store
from memtrace_client.models import UnitIn

NS = ("memories", "alex")
# What the "LLM" extracts from each turn: (key, fact); the second one reuses the job's key.
EXTRACTED = {
    "I work as a nurse at the city hospital.": ("job", "The user works as a nurse."),
    "I moved to Portland last month.": ("job", "The user moved to Portland."),
}


# Annotations stay evaluated (no __future__ import): LangGraph reads them, also under runpy.
class State(TypedDict, total=False):
    message: str
    question: str
    answer: UnitIn  # the answer's unit, for judge


def remember(state: State, *, store: BaseStore) -> State:
    if "message" in state:
        traced: TracedStore = store  # type: ignore[assignment]
        key, fact = EXTRACTED[state["message"]]
        with traced.extracting([state["message"]]):
            traced.put(NS, key, {"fact": fact})
    return {}


def recall(state: State, *, store: BaseStore) -> State:
    if "question" not in state:
        return {}
    traced: TracedStore = store  # type: ignore[assignment]
    found = traced.search(NS, query=state["question"], limit=1)
    facts = [str(item.value["fact"]) for item in found]
    answer = traced.answer(facts[0] if facts else "I do not know.")
    return {"answer": answer}


def main(url: str, project: str = "langgraph-example") -> str:
    """Run the agent, record the failed case; returns its id."""
    client = MemTraceClient(url, project=project)
    store = trace_store(InMemoryStore(), client)
    builder = StateGraph(State)
    builder.add_node("remember", remember)
    builder.add_node("recall", recall)
    builder.add_edge(START, "remember")
    builder.add_edge("remember", "recall")
    builder.add_edge("recall", END)
    graph = builder.compile(store=store)

    for message in EXTRACTED:
        graph.invoke({"message": message})
    question = "What does the user do for work?"
    answer = graph.invoke({"question": question})["answer"]
    case_id = store.judge(question, "nurse", answer)
    store.tracer.flush()
    return case_id


if __name__ == "__main__":
    case = main(sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:8000")
    sys.stdout.write(f"then: memtrace attribute {case} --project langgraph-example\n")
