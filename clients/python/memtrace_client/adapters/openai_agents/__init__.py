"""Trace an OpenAI Agents SDK agent (package ``openai-agents``): its runs and its session.

    from agents import Agent, Runner, SQLiteSession, set_trace_processors
    from memtrace_client.adapters.openai_agents import MemTraceProcessor, trace_session

    tracer = Tracer(MemTraceClient(url, project="my-agent"))
    processor = MemTraceProcessor(tracer)
    set_trace_processors([processor])         # or add_trace_processor, beside OpenAI's export
    session = trace_session(SQLiteSession("user-42", "chats.db"), tracer)
    result = await Runner.run(agent, question, session=session)
    tracer.case(question, expected, processor.answer_of(result), "failed")

Two halves on one tracer: the tracing processor records the model calls, tool calls and
handoffs from the SDK's spans (``processor``), the traced session what the agent stored, read
back and deleted (``session``); they meet on the items' text (``lineage``), so a stored item's
lineage runs from the session write to the read that returned it and every model call of the
run that read it.
"""

from __future__ import annotations

from agents.memory.session import Session

from memtrace_client.adapters.answering import as_tracer
from memtrace_client.adapters.openai_agents.items import SYSTEM, message_unit_id
from memtrace_client.adapters.openai_agents.processor import MemTraceProcessor
from memtrace_client.adapters.openai_agents.session import TracedSession
from memtrace_client.client import MemTraceClient
from memtrace_client.tracer import Tracer

__all__ = ["SYSTEM", "MemTraceProcessor", "TracedSession", "message_unit_id", "trace_session"]


def trace_session(
    session: Session,
    client: MemTraceClient | Tracer,
    *,
    verify_writes: bool = True,
    spool_dir: str | None = None,
) -> TracedSession:
    """Wrap ``session`` (any Agents SDK ``Session``) so that its calls go to MemTrace. Give it
    the tracer the ``MemTraceProcessor`` records with, so the two meet. ``verify_writes``: read
    the written items back after each ``add_items``, to record what the session really holds."""
    return TracedSession(session, as_tracer(client, spool_dir), verify_writes=verify_writes)
