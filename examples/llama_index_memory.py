"""A LlamaIndex ``Memory`` with a fact-extraction block, traced by MemTrace (``llama-index-core``).

    OPENAI_API_KEY=... python examples/llama_index_memory.py [http://127.0.0.1:8000]

(with an LLM in ``llama_index.core.Settings.llm``, e.g. ``pip install llama-index-llms-openai``.)
Two user turns go into the memory; its short-term queue holds one turn, so the second flushes the
first into the ``FactExtractionMemoryBlock``, whose LLM call extracts facts from it
(``llama_index.extract_facts``). A question is answered by the LLM from ``memory.get()``. With a
capable model the answer is probably right and the case passes; the test
(tests/clients/test_llama_index_adapter.py) runs this file against a scripted model that keeps the
food and drops the sister, and MemTrace blames the fact extraction (an ExtractionError).
"""

import sys

from llama_index.core import Settings
from llama_index.core.llms import LLM, ChatMessage
from llama_index.core.memory import FactExtractionMemoryBlock, Memory
from memtrace_client import MemTraceClient
from memtrace_client.adapters.llama_index import trace_memory

TURNS = ["My sister Emma lives in Denver, and my favourite food is ramen.", "Thanks, that is all."]
QUESTION = "Where does the user's sister live?"


def main(url: str, project: str = "llama-index-example", llm: LLM | None = None) -> str:
    """Tell the memory two turns, answer the question from it, record the case; its id."""
    llm = llm or Settings.llm
    memory = trace_memory(
        Memory.from_defaults(
            session_id="alex",
            token_limit=20,  # counted in words here: the queue keeps one turn, flushes the rest
            chat_history_token_ratio=0.5,
            token_flush_size=1,
            tokenizer_fn=str.split,
            memory_blocks=[FactExtractionMemoryBlock(name="facts", llm=llm)],
        ),
        MemTraceClient(url, project=project),
    )
    for said in TURNS:
        memory.put(ChatMessage(role="user", content=said))
        memory.put(ChatMessage(role="assistant", content="Noted."))
    evidence = memory.message_units()[0]  # the unit of the first turn, which said it
    messages = memory.get(input=QUESTION)
    reply = llm.chat([*messages, ChatMessage(role="user", content=QUESTION)])
    answer = memory.answer(str(reply.message.content))
    case_id = memory.judge(QUESTION, "Denver", answer, evidence=[evidence])
    memory.tracer.flush()
    return case_id


if __name__ == "__main__":
    case = main(sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:8000")
    sys.stdout.write(f"then: memtrace attribute {case} --project llama-index-example\n")
