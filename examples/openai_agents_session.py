"""An OpenAI Agents SDK agent whose session memory is traced by MemTrace (needs openai-agents).

    OPENAI_BASE_URL=http://127.0.0.1:8080/v1 OPENAI_API_KEY=... MEMTRACE_AGENTS_MODEL=my-model \
        python examples/openai_agents_session.py [http://127.0.0.1:8000]

Any OpenAI-compatible endpoint: ``OPENAI_BASE_URL`` and ``OPENAI_API_KEY`` as the ``openai``
client reads them, ``MEMTRACE_AGENTS_MODEL`` the model (default ``gpt-4.1-mini``), and
``MEMTRACE_AGENTS_API=chat`` for an endpoint without the Responses API (the agent then runs on
chat completions).

The user tells the agent three things in one ``SQLiteSession``; the question's run reads back
only the last two items of the history (``SessionSettings(limit=2)``), so the first fact never
reaches the model. Whatever the model, it cannot answer from what it was sent, and MemTrace
blames the read (a RetrievalError at ``agents.session.get_items``).
"""

import asyncio
import os
import sys

from agents import (
    Agent,
    OpenAIChatCompletionsModel,
    OpenAIResponsesModel,
    RunConfig,
    Runner,
    SessionSettings,
    SQLiteSession,
    set_trace_processors,
)
from memtrace_client import MemTraceClient, Tracer
from memtrace_client.adapters.openai_agents import MemTraceProcessor, trace_session
from openai import AsyncOpenAI

TURNS = [
    "On Saturdays I volunteer at the shelter.",
    "I like hiking.",
    "My favourite colour is green.",
]
QUESTION, EXPECTED = "What do I do on Saturdays?", "shelter"


async def converse(agent: Agent, tracer: Tracer, processor: MemTraceProcessor) -> str:
    session = trace_session(SQLiteSession("user-42"), tracer)  # in memory; any Session works
    for turn in TURNS:
        await Runner.run(agent, turn, session=session)
    last_two = RunConfig(session_settings=SessionSettings(limit=2))
    result = await Runner.run(agent, QUESTION, session=session, run_config=last_two)
    right = EXPECTED in str(result.final_output).lower()
    answer = processor.answer_of(result)
    return tracer.case(QUESTION, EXPECTED, answer, "passed" if right else "failed")


def main(url: str, project: str = "agents-example", base_url: str | None = None) -> str:
    """Run the agent, record the case; returns its id."""
    tracer = Tracer(MemTraceClient(url, project=project))
    processor = MemTraceProcessor(tracer)
    set_trace_processors([processor])  # MemTrace only: nothing is exported to OpenAI
    client = AsyncOpenAI(base_url=base_url or os.environ.get("OPENAI_BASE_URL"))
    name = os.environ.get("MEMTRACE_AGENTS_MODEL", "gpt-4.1-mini")
    chat = os.environ.get("MEMTRACE_AGENTS_API") == "chat"
    model = (
        OpenAIChatCompletionsModel(model=name, openai_client=client)
        if chat
        else OpenAIResponsesModel(model=name, openai_client=client)
    )
    agent = Agent(name="Assistant", instructions="Answer from what the user told you.", model=model)
    try:
        case_id = asyncio.run(converse(agent, tracer, processor))
    finally:
        set_trace_processors([])
    tracer.flush()
    return case_id


if __name__ == "__main__":
    case = main(sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:8000")
    sys.stdout.write(f"then: memtrace attribute {case} --project agents-example\n")
