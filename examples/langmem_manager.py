"""A LangGraph agent whose LangMem memory manager is traced by MemTrace (needs ``langmem``).

    OPENAI_API_KEY=... python examples/langmem_manager.py [http://127.0.0.1:8000]

A two-node graph hands a user turn to LangMem's memory store manager, which extracts memories
from it into a traced store, and answers a question from a store search. Each call of the manager
is recorded as one extraction (``langmem.extract``), the memories it writes as that extraction's
puts. With a capable model the answer is probably right and the case passes; the test
(tests/clients/test_langmem_adapter.py) runs this file against a scripted model that keeps the
food and drops the sister, and MemTrace blames the manager's extraction (an ExtractionError).
"""

import sys
from typing import Annotated, Any, TypedDict

from langchain.chat_models import init_chat_model
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AnyMessage, HumanMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore
from langmem import create_memory_store_manager
from memtrace_client import MemTraceClient
from memtrace_client.adapters.langgraph import TracedStore, trace_store
from memtrace_client.adapters.langmem import trace_manager
from memtrace_client.models import UnitIn

NS = ("memories", "alex")
TURN = "My sister Emma lives in Denver, and my favourite food is ramen."
QUESTION = "Where does the user's sister live?"


# Annotations stay evaluated (no __future__ import): LangGraph reads them, also under runpy.
class State(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]
    question: str
    answer: UnitIn  # the answer's unit, for judge


def build(model: BaseChatModel, store: TracedStore) -> Any:
    """The graph: ``remember`` runs the traced manager, ``recall`` answers from the store."""
    manager = trace_manager(create_memory_store_manager(model, namespace=NS))

    def remember(state: State) -> State:
        if state.get("messages"):
            manager.invoke({"messages": state["messages"]})  # writes to the graph's store
        return {}

    def recall(state: State, *, store: BaseStore) -> State:
        if "question" not in state:
            return {}
        traced: TracedStore = store  # type: ignore[assignment]
        traced.search(NS, query=state["question"], limit=3)

        def ask(context: str) -> str:
            prompt = f"Answer from these memories.\n<memories>\n{context}\n</memories>\n"
            return str(model.invoke(f"{prompt}Question: {state['question']}").content)

        return {"answer": traced.answer(ask)}

    builder = StateGraph(State)
    builder.add_node("remember", remember)
    builder.add_node("recall", recall)
    builder.add_edge(START, "remember")
    builder.add_edge("remember", "recall")
    builder.add_edge("recall", END)
    return builder.compile(store=store)


def main(url: str, project: str = "langmem-example", model: BaseChatModel | None = None) -> str:
    """Run the agent, record the case; returns its id."""
    store = trace_store(InMemoryStore(), MemTraceClient(url, project=project))
    graph = build(model or init_chat_model("openai:gpt-4o-mini"), store)
    turn = graph.invoke({"messages": [HumanMessage(TURN)]})["messages"][0]
    answer = graph.invoke({"question": QUESTION})["answer"]
    case_id = store.judge(QUESTION, "Denver", answer, evidence=[store.message_unit(turn)])
    store.tracer.flush()
    return case_id


if __name__ == "__main__":
    case = main(sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:8000")
    sys.stdout.write(f"then: memtrace attribute {case} --project langmem-example\n")
