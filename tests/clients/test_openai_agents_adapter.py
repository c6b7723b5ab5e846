"""The OpenAI Agents SDK adapter on the real ``openai-agents`` package, end to end.

A real ``Agent`` run by the real ``Runner`` with a traced ``SQLiteSession`` (in memory) as its
memory; its model is the scripted OpenAI-compatible server, over the Responses API (the SDK's
default, ``OpenAIResponsesModel``) and over chat completions (``OpenAIChatCompletionsModel``).
The scripted model says "Noted" to a statement and answers a question from the history it was
sent, honestly, except for one question it misreads. Each memory goes wrong in another way (an
item the session drops, an undo, a cleared session, a history ``limit``, the misreading); the
trace goes through the SDK into the running service and Neo4j, and ``POST /attribute`` must
blame each wrong answer on the operation that lost the fact.
"""

from __future__ import annotations

import asyncio
import json
import runpy
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from agents import (
    Agent,
    OpenAIChatCompletionsModel,
    OpenAIResponsesModel,
    RunConfig,
    Runner,
    SessionSettings,
    SQLiteSession,
    function_tool,
    set_trace_processors,
)
from agents.models.interface import Model
from memtrace_client import MemTraceClient, Tracer
from memtrace_client.adapters.openai_agents import (
    MemTraceProcessor,
    TracedSession,
    message_unit_id,
    trace_session,
)
from neo4j import Driver
from openai import AsyncOpenAI

from tests.support.attribution import assert_attributed
from tests.support.graph import read_by
from tests.support.llm_server import Reply, ScriptedLLM, ToolCall, tool_names
from tests.support.servers import REPO, ServiceHandle


class CappedSession(SQLiteSession):
    """A session that keeps only items of at most ``max_chars`` characters of text (a size cap,
    as a store with a row limit has): a long turn is dropped before it is stored."""

    def __init__(self, session_id: str, max_chars: int = 40) -> None:
        super().__init__(session_id)
        self.max_chars = max_chars

    async def add_items(self, items: list[Any]) -> None:
        kept = [i for i in items if len(json.dumps(i.get("content", ""))) <= self.max_chars]
        await super().add_items(kept)


@dataclass(frozen=True)
class Story:
    """One memory going wrong: the turns told, what the app does then, the question."""

    session: str
    turns: list[str]
    question: str
    expected: str
    error_type: str
    operation: str
    evidence: str  # the turn that held the answer
    after: Callable[[TracedSession], Any] | None = None  # what the app does before the question
    limit: int | None = None  # the history limit of the question's run


async def undo_last_turn(session: TracedSession) -> None:
    await session.pop_item()  # the agent's reply
    await session.pop_item()  # the user's turn


async def clear(session: TracedSession) -> None:
    await session.clear_session()


SISTER = "My sister Emma moved to Denver last spring, and she loves the mountains there."
STORIES = [
    Story(
        "s-capped", [SISTER], "Where does my sister live?", "Denver",
        "ExtractionError", "agents.session.add_items", SISTER,
    ),
    Story(
        "s-undo", ["My dog is called Biscuit."], "What is my dog called?", "Biscuit",
        "DeletionError", "agents.session.pop_item", "My dog is called Biscuit.", undo_last_turn,
    ),
    Story(
        # the question shares "work" with the turn: "What is my job?" scores exactly on the
        # heuristic's line, which its second reading calls inconclusive (test_second_reading)
        "s-clear", ["I work as a nurse."], "What do I work as?", "nurse",
        "DeletionError", "agents.session.clear", "I work as a nurse.", clear,
    ),
    Story(
        "s-limit", ["On Saturdays I volunteer at the shelter.", "I like hiking."],
        "What do I do on Saturdays?", "shelter",
        "RetrievalError", "agents.session.get_items", "On Saturdays I volunteer at the shelter.",
        limit=2,
    ),
    Story(
        "s-food", ["My favourite food is ramen."], "What is my favourite food?", "ramen",
        "ResponseError", "agents.model", "My favourite food is ramen.",
    ),
]  # fmt: skip
ANSWERS = {s.question: s.expected for s in STORIES}
MISREAD = {"What is my favourite food?": "Your favourite food is pizza."}


def scripted_agent(request: dict[str, Any]) -> str | Reply:
    """The model: notes a statement; answers a question from the history it was sent (the
    sentence holding the expected word), or says it does not know; misreads one question;
    calls the weather tool, then reports its result."""
    messages = request["messages"]
    if messages[-1]["role"] == "tool":
        return f"The weather: {messages[-1]['content']}"
    said = [m for m in messages if m["role"] == "user"]
    last = str(said[-1]["content"]) if said else ""
    if last.startswith("What is the weather"):
        return Reply(tool_calls=(ToolCall("weather", {"city": "Lisbon"}),))
    if not last.endswith("?"):
        return f"Noted ({len(said)})."  # a reply of its own per turn, never the fact
    if last in MISREAD:
        return MISREAD[last]
    history = [str(m["content"]) for m in messages[:-1] if m["role"] == "user"]
    known = [h for h in history if ANSWERS.get(last, "\0") in h]
    return f"You told me: {known[0]}" if known else "I do not know."


@function_tool
def weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"


def model_of(api: str, llm: ScriptedLLM) -> Model:
    client = AsyncOpenAI(base_url=llm.base_url, api_key="k", max_retries=0)
    if api == "responses":
        return OpenAIResponsesModel(model="scripted", openai_client=client)
    return OpenAIChatCompletionsModel(model="scripted", openai_client=client)


@pytest.fixture
def traced(
    llm: ScriptedLLM, service: ServiceHandle, project: str, tmp_path: Path
) -> Iterator[tuple[Tracer, MemTraceProcessor]]:
    """A tracer on the test's project and the processor, as the SDK's only one (so nothing is
    exported to OpenAI), removed afterwards."""
    llm.script["answer"] = scripted_agent  # type: ignore[attr-defined]
    tracer = Tracer(MemTraceClient(service.url, project=project), spool_dir=tmp_path)
    processor = MemTraceProcessor(tracer)
    set_trace_processors([processor])
    try:
        yield tracer, processor
    finally:
        set_trace_processors([])
        tracer.close()


@pytest.mark.parametrize("api", ["responses", "chat_completions"])
def test_agent_with_a_session_traced_and_each_error_type_attributed(
    api: str,
    llm: ScriptedLLM,
    traced: tuple[Tracer, MemTraceProcessor],
    client: httpx.Client,
    project: str,
    neo4j_driver: Driver,
) -> None:
    tracer, processor = traced
    agent = Agent(name="Assistant", instructions="Answer from what the user told you.")
    agent.model = model_of(api, llm)
    cases: dict[str, str] = {}

    async def tell_and_ask(story: Story) -> None:
        inner = CappedSession(story.session) if story.session == "s-capped" else None
        session = trace_session(inner or SQLiteSession(story.session), tracer)
        for turn in story.turns:
            await Runner.run(agent, turn, session=session)
        if story.after is not None:
            await story.after(session)
        config = RunConfig(session_settings=SessionSettings(limit=story.limit))
        result = await Runner.run(agent, story.question, session=session, run_config=config)
        said = str(result.final_output)
        assert story.expected not in said, (story.question, said)  # the memory went wrong
        cases[story.question] = tracer.case(
            story.question,
            story.expected,
            processor.answer_of(result),
            "failed",
            evidence_units=[message_unit_id("user", story.evidence)],
        )

    async def run_all() -> None:
        for story in STORIES:
            await tell_and_ask(story)

    asyncio.run(run_all())
    assert tracer.flush(60)

    for story in STORIES:
        result = assert_attributed(
            client,
            project,
            cases[story.question],
            (story.error_type, story.operation),
            label=story.question,
        )
        blamed_op = result["operation"]["id"]
        # Not just any operation of that name: the one of this story's session.
        session_of = neo4j_driver.execute_query(
            "MATCH (o:Operation {project: $p, id: $id}) RETURN o.session_id AS s",
            p=project,
            id=blamed_op,
        ).records[0]["s"]
        assert session_of == story.session, story.question
        if story.error_type in ("ExtractionError", "DeletionError"):
            assert story.evidence in read_by(neo4j_driver, project, blamed_op), story.question
        else:  # the question's own read or model call: its output is what the answer read
            assert _feeds_answer(neo4j_driver, project, blamed_op, cases[story.question]), (
                story.question,
                json.dumps(result),
            )


def _feeds_answer(driver: Driver, project: str, op_id: str, case_id: str) -> bool:
    """Whether ``op_id`` is the model call that produced the case's answer, or produced a unit
    that model call consumed."""
    rows = driver.execute_query(
        "MATCH (c:Case {project: $p, id: $case})-[:ANSWERED_BY]->(a:Unit)"
        "<-[:PRODUCES]-(answering:Operation) "
        "OPTIONAL MATCH (answering)-[:CONSUMES]->(:Unit)<-[:PRODUCES]-(feeder:Operation) "
        "RETURN answering.id AS answering, collect(feeder.id) AS feeders",
        p=project,
        case=case_id,
    ).records
    return bool(rows) and (op_id == rows[0]["answering"] or op_id in rows[0]["feeders"])


def _edges(driver: Driver, project: str) -> list[tuple[str, str, str, str]]:
    """Every edge of the project as (operation name, edge type, unit kind, unit content), in
    the order the operations were recorded (an operation's in a fixed order)."""
    rows = driver.execute_query(
        "MATCH (o:Operation {project: $p})-[e:CONSUMES|PRODUCES]->(u:Unit) "
        "RETURN o.name AS op, type(e) AS edge, u.kind AS kind, u.content AS content "
        "ORDER BY o.ts, o.id, type(e), u.kind, u.content",
        p=project,
    ).records
    return [(r["op"], r["edge"], r["kind"], r["content"]) for r in rows]


@pytest.mark.parametrize("api", ["responses", "chat_completions"])
def test_a_tool_call_its_result_and_the_stored_turn_are_linked(
    api: str,
    llm: ScriptedLLM,
    traced: tuple[Tracer, MemTraceProcessor],
    project: str,
    neo4j_driver: Driver,
) -> None:
    """One turn that calls a tool: the first model call produces the call, the tool consumes it
    and produces its result, the second model call consumes the result and the session's read,
    and the session stores the turn's items, each as a message naming the unit that said it."""
    tracer, processor = traced
    agent = Agent(name="Weather desk", instructions="Use the tool.", tools=[weather])
    agent.model = model_of(api, llm)
    session = trace_session(SQLiteSession("s-tools"), tracer)

    async def run() -> Any:
        await Runner.run(agent, "I live in Lisbon.", session=session)
        return await Runner.run(agent, "What is the weather at home?", session=session)

    result = asyncio.run(run())
    assert result.final_output == "The weather: sunny in Lisbon"
    answer = processor.answer_of(result)
    assert tracer.flush(60)

    edges = _edges(neo4j_driver, project)
    second = edges.index(("agents.session.get_items", "CONSUMES", "memory", "I live in Lisbon."))
    turn = [e for e in edges[second:] if e[0] != "agents.session.get_items" or e[1] == "PRODUCES"]
    call = 'weather({"city": "Lisbon"})'
    history = "user: I live in Lisbon.\nassistant: Noted (1)."
    assert turn == [
        ("agents.session.get_items", "PRODUCES", "context", history),
        ("agents.session.add_items", "CONSUMES", "message", "What is the weather at home?"),
        ("agents.session.add_items", "PRODUCES", "memory", "What is the weather at home?"),
        # the first model call: instructions, the history read back, the new turn -> the call
        ("agents.model", "CONSUMES", "context", history),
        ("agents.model", "CONSUMES", "message", "What is the weather at home?"),
        ("agents.model", "CONSUMES", "prompt", "Use the tool."),
        ("agents.model", "PRODUCES", "other", call),
        ("agents.tool.weather", "CONSUMES", "other", call),
        ("agents.tool.weather", "PRODUCES", "other", "sunny in Lisbon"),
        # the SDK stores each turn of the run as it ends: the call and its result
        ("agents.session.add_items", "CONSUMES", "message", "sunny in Lisbon"),
        ("agents.session.add_items", "CONSUMES", "message", call),
        ("agents.session.add_items", "PRODUCES", "memory", "sunny in Lisbon"),
        ("agents.session.add_items", "PRODUCES", "memory", call),
        # the second call: the same, and the call and its result (as the tool made them, not
        # as stored: the run did not read them back) -> the answer
        ("agents.model", "CONSUMES", "context", history),
        ("agents.model", "CONSUMES", "message", "What is the weather at home?"),
        ("agents.model", "CONSUMES", "other", "sunny in Lisbon"),
        ("agents.model", "CONSUMES", "other", call),
        ("agents.model", "CONSUMES", "prompt", "Use the tool."),
        ("agents.model", "PRODUCES", "answer", "The weather: sunny in Lisbon"),
        ("agents.session.add_items", "CONSUMES", "message", "The weather: sunny in Lisbon"),
        ("agents.session.add_items", "PRODUCES", "memory", "The weather: sunny in Lisbon"),
    ]
    # The answer of the run is the last call's; the call is the agent's, in the session read.
    [answering] = _operations(
        neo4j_driver, project, "MATCH (o)-[:PRODUCES]->(:Unit {id: $x})", answer
    )
    assert answering["session_id"] == "s-tools"
    attributes = answering["attributes"]
    assert (attributes["agent"], attributes["api"]) == ("Weather desk", api)
    assert attributes["prompt"].startswith("prompt:agents.Weather_desk@")
    # The stored answer names the unit the call produced.
    stored = _operations(neo4j_driver, project, "WHERE o.name = 'agents.session.add_items'", answer)
    assert answer in stored[-1]["attributes"]["said_by"]


def _operations(driver: Driver, project: str, where: str, x: str) -> list[dict[str, Any]]:
    rows = driver.execute_query(
        f"MATCH (o:Operation {{project: $p}}) {where} "
        "RETURN o.session_id AS session_id, o.attributes AS attributes ORDER BY o.ts",
        p=project,
        x=x,
    ).records
    return [
        {
            "session_id": r["session_id"],
            "attributes": json.loads(r["attributes"])
            if isinstance(r["attributes"], str)
            else r["attributes"],
        }
        for r in rows
    ]


def test_example_runs_and_its_case_is_attributed(
    llm: ScriptedLLM,
    service: ServiceHandle,
    client: httpx.Client,
    project: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    llm.script["answer"] = scripted_agent  # type: ignore[attr-defined]
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    monkeypatch.delenv("MEMTRACE_AGENTS_API", raising=False)
    example = runpy.run_path(str(REPO / "examples" / "openai_agents_session.py"))
    case_id = example["main"](service.url, project, base_url=llm.base_url)
    assert_attributed(client, project, case_id, ("RetrievalError", "agents.session.get_items"))


async def _exercise(session: Any) -> list[Any]:
    """Every method of the ``Session`` protocol, in one fixed sequence."""
    out: list[Any] = []
    await session.add_items([{"role": "user", "content": "I live in Lisbon."}])
    await session.add_items(
        [
            {"role": "assistant", "content": "Noted."},
            {"role": "user", "content": "My dog is called Biscuit."},
        ]
    )
    out.append(await session.get_items())
    out.append(await session.get_items(limit=1))
    out.append(await session.pop_item())
    out.append(await session.get_items())
    await session.clear_session()
    out.append(await session.get_items())
    out.append(await session.pop_item())
    out.append(session.session_id)
    return out


def test_traced_session_behaves_as_the_bare_session_and_records_each_call(
    traced: tuple[Tracer, MemTraceProcessor], project: str, neo4j_driver: Driver
) -> None:
    tracer, _ = traced
    bare = asyncio.run(_exercise(SQLiteSession("s-same")))
    session = trace_session(SQLiteSession("s-same"), tracer)
    assert isinstance(session, TracedSession)
    assert asyncio.run(_exercise(session)) == bare
    assert bare[0][-1] == {"role": "user", "content": "My dog is called Biscuit."}  # it did work
    assert tracer.flush(30)
    assert _count(neo4j_driver, project) == {
        "agents.session.add_items": 2,
        "agents.session.get_items": 4,
        "agents.session.pop_item": 1,  # the second pop found nothing to remove
        "agents.session.clear": 1,
    }
    deleted = neo4j_driver.execute_query(
        "MATCH (o:Operation {project: $p, kind: 'deletion'})-[:CONSUMES]->(m:Unit) "
        "RETURN o.name AS op, m.content AS content, "
        "COUNT { (o)-[:PRODUCES]->(:Unit {kind: 'tombstone'}) } AS tombstones "
        "ORDER BY o.ts, content",
        p=project,
    ).records
    assert [r["tombstones"] for r in deleted] == [1, 2, 2]  # one per item removed
    assert [(r["op"], r["content"]) for r in deleted] == [
        ("agents.session.pop_item", "My dog is called Biscuit."),
        ("agents.session.clear", "I live in Lisbon."),
        ("agents.session.clear", "Noted."),
    ]


def _count(driver: Driver, project: str) -> dict[str, int]:
    rows = driver.execute_query(
        "MATCH (o:Operation {project: $p}) RETURN o.name AS name, count(*) AS n", p=project
    ).records
    return {r["name"]: r["n"] for r in rows}


def test_without_span_data_a_model_call_is_recorded_without_units(
    llm: ScriptedLLM, traced: tuple[Tracer, MemTraceProcessor], project: str, neo4j_driver: Driver
) -> None:
    """With the SDK told to keep data out of spans, a call is still an operation (and says
    why it has no inputs and outputs); the session is recorded as before."""
    tracer, processor = traced
    agent = Agent(name="Assistant", instructions="Be brief.", model=model_of("responses", llm))
    session = trace_session(SQLiteSession("s-private"), tracer)
    private = RunConfig(trace_include_sensitive_data=False)
    result = asyncio.run(
        Runner.run(agent, "I live in Lisbon.", session=session, run_config=private)
    )
    assert result.final_output == "Noted (1)."
    with pytest.raises(ValueError, match="no recorded answer"):
        processor.answer_of(result)
    assert tracer.flush(30)
    [call] = _operations(neo4j_driver, project, "WHERE o.name = 'agents.model'", "")
    assert call["attributes"]["data_included"] is False
    assert _count(neo4j_driver, project)["agents.session.add_items"] == 2


def test_a_handoff_is_recorded_between_the_two_agents_calls(
    llm: ScriptedLLM, traced: tuple[Tracer, MemTraceProcessor], project: str, neo4j_driver: Driver
) -> None:
    def triage(request: dict[str, Any]) -> str | Reply:
        if "transfer_to_billing" in tool_names(request):
            return Reply(tool_calls=(ToolCall("transfer_to_billing", {}),))
        return "Billing here: your invoice is paid."

    llm.script["answer"] = triage  # type: ignore[attr-defined]
    tracer, processor = traced
    model = model_of("responses", llm)
    billing = Agent(name="billing", instructions="Answer invoices.", model=model)
    front = Agent(name="front desk", instructions="Hand off.", handoffs=[billing], model=model)
    session = trace_session(SQLiteSession("s-handoff"), tracer)
    result = asyncio.run(Runner.run(front, "Is my invoice paid?", session=session))
    assert result.final_output == "Billing here: your invoice is paid."
    answer = processor.answer_of(result)
    assert tracer.flush(30)

    rows = neo4j_driver.execute_query(
        "MATCH (o:Operation {project: $p}) WHERE o.name IN ['agents.model', 'agents.handoff'] "
        "OPTIONAL MATCH (o)-[:CONSUMES]->(i:Unit {kind: 'other'}) "
        "OPTIONAL MATCH (o)-[:PRODUCES]->(u:Unit) "
        "WITH o, collect(DISTINCT i.content) AS read, collect(DISTINCT u.id) AS made "
        "RETURN o.name AS name, o.attributes AS attributes, read, made ORDER BY o.ts",
        p=project,
    ).records
    steps = [(r["name"], json.loads(r["attributes"]).get("agent")) for r in rows]
    assert steps == [
        ("agents.model", "front desk"),
        ("agents.handoff", "front desk"),
        ("agents.model", "billing"),
    ]
    decided = "transfer_to_billing({})"
    assert rows[1]["read"] == [decided]  # the handoff read the call that decided it
    attributes = json.loads(rows[1]["attributes"])
    assert (attributes["from_agent"], attributes["to_agent"]) == ("front desk", "billing")
    assert decided in rows[2]["read"] and rows[2]["made"] == [answer]
