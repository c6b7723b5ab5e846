"""A LlamaIndex ``Memory`` traced end to end, on the real ``llama-index-core``.

Real ``Memory`` objects with real blocks (``FactExtractionMemoryBlock``, ``VectorMemoryBlock`` on
a ``SimpleVectorStore``, ``StaticMemoryBlock``) are told a small conversation; their short-term
queue flushes each turn into the blocks as the next one arrives, and each question is answered
by an LLM call over what ``memory.get()`` returns. The LLM is a tiny ``CustomLLM`` that sends
every call through the real ``openai`` client to the scripted OpenAI-compatible server, whose
script plays the model: it extracts and condenses facts and answers, making one mistake of each
kind. (``llama-index-llms-openai`` 0.8.x, the package ``OpenAILike`` comes in, requires
``openai<3`` and would downgrade the ``openai`` 3.x the project tests with, so it is not used.)
The vector block embeds through the same client with the server's ``/v1/embeddings``
(deterministic bag-of-words vectors): embeddings are not the LLM under test, only what the block
searches with. The trace goes through the SDK into the running service and Neo4j, and
``POST /attribute`` must blame each wrong answer on the operation that made the mistake.
"""

from __future__ import annotations

import json
import re
import runpy
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

import httpx
import openai
import pytest
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.bridge.pydantic import PrivateAttr
from llama_index.core.chat_engine import SimpleChatEngine
from llama_index.core.llms import (
    CompletionResponse,
    CompletionResponseGen,
    CustomLLM,
    LLMMetadata,
)
from llama_index.core.memory import (
    FactExtractionMemoryBlock,
    Memory,
    StaticMemoryBlock,
    VectorMemoryBlock,
)
from llama_index.core.schema import BaseNode
from llama_index.core.vector_stores import SimpleVectorStore
from llama_index.core.vector_stores.types import VectorStoreQuery, VectorStoreQueryResult
from memtrace_client import MemTraceClient, Tracer
from memtrace_client.adapters.llama_index import (
    CONDENSE,
    EXTRACT,
    GET,
    INSERT,
    RESET,
    TracedMemory,
    trace_memory,
)
from memtrace_client.models import UnitIn
from neo4j import Driver

from tests.support.attribution import assert_attributed
from tests.support.graph import read_by
from tests.support.llm_server import Reply, ScriptedLLM, user_text
from tests.support.servers import REPO, ServiceHandle


class ScriptedChat(CustomLLM):
    """A LlamaIndex LLM whose every call is one chat completion on an OpenAI-compatible server,
    through the real ``openai`` client (LlamaIndex turns chat messages into the prompt)."""

    base_url: str

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(model_name="scripted")

    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        client = openai.OpenAI(base_url=self.base_url, api_key="test", max_retries=0)
        reply = client.chat.completions.create(
            model="scripted", messages=[{"role": "user", "content": prompt}]
        )
        return CompletionResponse(text=reply.choices[0].message.content or "")

    def stream_complete(
        self, prompt: str, formatted: bool = False, **kwargs: Any
    ) -> CompletionResponseGen:
        yield self.complete(prompt)


class ServerEmbedding(BaseEmbedding):
    """Embeddings from the server's ``/v1/embeddings`` through the real ``openai`` client."""

    base_url: str

    def _embed(self, text: str) -> list[float]:
        client = openai.OpenAI(base_url=self.base_url, api_key="test", max_retries=0)
        return client.embeddings.create(model="scripted-embeddings", input=text).data[0].embedding

    def _get_query_embedding(self, query: str) -> list[float]:
        return self._embed(query)

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._embed(text)

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._embed(query)


class TextVectorStore(SimpleVectorStore):
    """LlamaIndex's in-memory ``SimpleVectorStore`` (its search, its metadata filters), keeping
    each node too: ``VectorMemoryBlock`` needs a store that returns the nodes' text, and
    llama-index-core ships none (the others are integration packages with a server)."""

    stores_text: bool = True
    _nodes: dict[str, BaseNode] = PrivateAttr(default_factory=dict)

    def add(self, nodes: Sequence[BaseNode], **add_kwargs: Any) -> list[str]:
        self._nodes.update((node.node_id, node) for node in nodes)
        return super().add(nodes, **add_kwargs)

    def query(self, query: VectorStoreQuery, **kwargs: Any) -> VectorStoreQueryResult:
        found = super().query(query, **kwargs)
        found.nodes = [self._nodes[i] for i in found.ids or []]
        return found


ACK = "Noted."
NURSE = "I work as a nurse at the city hospital."
SISTER_AND_FOOD = "My sister Emma lives in Denver, and my favourite food is ramen."
DOG = "I adopted a golden retriever named Biscuit."
SHELTER = "On Saturdays I volunteer at the animal shelter."
LOOKALIKE = "What people do on Saturdays in Portland is too loud for me."
CAR = "My old car finally broke down, so I sold it."
BYE = "Thanks, that is all for today."

# What the model extracts from each turn: the sister is never extracted (an ExtractionError).
FACTS = {
    NURSE: ["The user works as a nurse."],
    SISTER_AND_FOOD: ["The user's favourite food is ramen."],
    DOG: ["The user's dog is Biscuit."],
    SHELTER: ["On Saturdays the user volunteers at the animal shelter."],
}
# The fourth fact passes max_facts=3: the condensed list drops the job (an UpdateError).
CONDENSED = [FACTS[SISTER_AND_FOOD][0], FACTS[DOG][0], FACTS[SHELTER][0]]

JOB_Q, SISTER_Q = "What does the user do for work?", "Where does the user's sister live?"
FOOD_Q, SATURDAYS_Q = "What is the user's favourite food?", "What does the user do on Saturdays?"
CAR_Q = "What happened to the user's old car?"
MISREAD = {FOOD_Q: "The user's favourite food is pizza."}  # the model misreads a good context
KEYWORD = {
    JOB_Q: "work",
    SISTER_Q: "sister",
    FOOD_Q: "food",
    SATURDAYS_Q: "Saturdays",
    CAR_Q: "car",
}
FACT = re.compile(r"<fact>(.*?)</fact>")


def model_script(request: dict[str, Any]) -> Reply:
    """The model: the fact block's extraction and condensing calls, else an answer."""
    prompt = user_text(request)
    if "precise fact extraction system" in prompt:
        turns = [facts for said, facts in FACTS.items() if said in prompt]
        assert len(turns) <= 1, prompt
        kept = turns[0] if turns else []  # a turn that says nothing worth keeping
        return Reply("<facts>" + "".join(f"<fact>{f}</fact>" for f in kept) + "</facts>")
    if "fact condensing system" in prompt:
        return Reply("<facts>" + "".join(f"<fact>{f}</fact>" for f in CONDENSED) + "</facts>")
    return Reply(answer_from_memory(prompt))


def answer_from_memory(prompt: str) -> str:
    """The first line of the memory the prompt gave that is about the question, or a misreading
    (the question is the prompt's last user line)."""
    question = next((q for q in KEYWORD if q in prompt.rsplit("user:", 1)[-1]), None)
    if question is None:  # a turn of the conversation, not a question
        return ACK
    if question in MISREAD:
        return MISREAD[question]
    if "<memory>" not in prompt:  # every block was truncated away
        return "I do not know."
    memory = prompt.split("<memory>", 1)[1].split("</memory>", 1)[0]
    lines = FACT.findall(memory) + [
        line for line in re.split(r"</?message[^>]*>|\n", memory) if line.strip()
    ]
    about = [line.strip() for line in lines if KEYWORD[question].lower() in line.lower()]
    return about[0] if about else "I do not know."


def ask(memory: TracedMemory, llm: ScriptedChat, question: str) -> UnitIn:
    """The question answered from ``memory.get()`` by the LLM, recorded as the answer."""
    messages = memory.get(input=question)
    reply = llm.chat([*messages, ChatMessage(role="user", content=question)])
    return memory.answer(str(reply.message.content))


def tell(memory: TracedMemory, turns: list[str]) -> dict[str, UnitIn]:
    """Each user turn and the assistant's acknowledgement; the unit of each user turn."""
    units = {}
    for said in turns:
        memory.put(ChatMessage(role="user", content=said))
        units[said] = memory.message_units()[-1]
        memory.put(ChatMessage(role="assistant", content=ACK))
    return units


def words(text: str) -> list[str]:
    """The tokenizer the memories count with (tiktoken would download its encoding)."""
    return text.split()


def short_memory(session: str, blocks: list[Any], token_limit: int = 20) -> Memory:
    """A memory whose short-term queue holds one turn: each user turn flushes the one before."""
    return Memory.from_defaults(
        session_id=session,
        token_limit=token_limit,
        chat_history_token_ratio=0.5,
        token_flush_size=1,
        tokenizer_fn=words,
        memory_blocks=blocks,
    )


class Question(NamedTuple):
    text: str
    expected: str
    said: str  # the turn that holds the answer (the case's evidence)
    error_type: str
    operation: str  # the name of the operation blamed
    culprit: str  # a text that operation read: the turn it mishandled, or the question


def scripted(
    llm: ScriptedLLM, service: ServiceHandle, project: str, spool: Path
) -> tuple[ScriptedChat, Tracer]:
    """The model the script plays, as a LlamaIndex LLM, and a tracer into the service."""
    llm.script["answer"] = model_script  # type: ignore[attr-defined]
    tracer = Tracer(MemTraceClient(service.url, project=project), spool_dir=spool)
    return ScriptedChat(base_url=llm.base_url), tracer


def ask_all(
    memory: TracedMemory, llm: ScriptedChat, questions: list[Question], said: dict[str, UnitIn]
) -> dict[str, str]:
    """Each question asked and judged against its expected answer, with the turn that holds
    the answer as evidence; the case of each question."""
    cases = {}
    for q in questions:
        answer = ask(memory, llm, q.text)
        cases[q.text] = memory.judge(q.text, q.expected, answer, evidence=[said[q.said]])
    return cases


def assert_blamed(
    client: httpx.Client,
    driver: Driver,
    project: str,
    questions: list[Question],
    cases: dict[str, str],
) -> None:
    """Each case is attributed to its error type at its operation: not just any operation of
    that name, the one that read the turn it mishandled (or the question)."""
    for q in questions:
        result = assert_attributed(
            client, project, cases[q.text], (q.error_type, q.operation), label=q.text
        )
        read = read_by(driver, project, result["operation"]["id"])
        assert any(q.culprit in text for text in read), (q.text, read)


def test_fact_extraction_memory_traced_and_each_error_attributed(
    service: ServiceHandle,
    client: httpx.Client,
    project: str,
    neo4j_driver: Driver,
    llm: ScriptedLLM,
    no_network: list[str],
    tmp_path: Path,
) -> None:
    chat, tracer = scripted(llm, service, project, tmp_path)
    facts = FactExtractionMemoryBlock(name="facts", llm=chat, max_facts=3)
    memory = trace_memory(short_memory("alex", [facts]), tracer)

    said = tell(memory, [NURSE, SISTER_AND_FOOD, DOG, SHELTER, BYE])
    # The block holds what the scripted model extracted and condensed, through LlamaIndex.
    assert memory.memory_blocks[0].facts == CONDENSED
    questions = [
        Question(SISTER_Q, "Denver", SISTER_AND_FOOD, "ExtractionError", EXTRACT, SISTER_AND_FOOD),
        Question(JOB_Q, "nurse", NURSE, "UpdateError", CONDENSE, FACTS[NURSE][0]),
        Question(FOOD_Q, "ramen", SISTER_AND_FOOD, "ResponseError", "answer", FOOD_Q),
    ]
    cases = ask_all(memory, chat, questions, said)
    assert tracer.flush(60)
    assert no_network == []

    # Four flushes (the last turn stays in the short-term queue), each of one turn into one
    # extraction and one store of the fact list; one condensing, when the fourth fact came.
    flushes = _ops(neo4j_driver, project, "llama_index.flush")
    flushed = [sorted(r["read"]) for r in flushes]
    assert flushed == [sorted([t, ACK]) for t in (NURSE, SISTER_AND_FOOD, DOG, SHELTER)]
    extractions = _ops(neo4j_driver, project, "llama_index.extract_facts")
    assert [r["made"] for r in extractions] == [FACTS[t] for t in FACTS]
    stores = _ops(neo4j_driver, project, "llama_index.store_facts")
    assert [len(r["made"]) for r in stores] == [1, 1, 1, 1]
    condensed = _ops(neo4j_driver, project, "llama_index.condense_facts")
    assert [r["made"] for r in condensed] == [["\n".join(f"<fact>{f}</fact>" for f in CONDENSED)]]
    # Every get: the fact block's retrieval and the short-term chat history, read by the answer.
    gets = _ops(neo4j_driver, project, "llama_index.get:facts")
    assert [r["read"] for r in gets] == [[q.text] for q in questions]
    history = _ops(neo4j_driver, project, "llama_index.get:chat_history")
    assert [sorted(r["read"]) for r in history] == [sorted([q.text, BYE, ACK]) for q in questions]
    answers = _ops(neo4j_driver, project, "answer")
    assert [r["ins"] for r in answers] == [3] * len(questions)  # the question and two contexts

    assert_blamed(client, neo4j_driver, project, questions, cases)


def test_vector_memory_retrieval_and_reset_attributed(
    service: ServiceHandle,
    client: httpx.Client,
    project: str,
    neo4j_driver: Driver,
    llm: ScriptedLLM,
    no_network: list[str],
    tmp_path: Path,
) -> None:
    """A vector block that ranks a look-alike turn above the one that answers (a RetrievalError
    at its get), and a ``reset`` that drops the turn still in the short-term queue (no block
    of LlamaIndex deletes anything: this is the one DeletionError the memory can make)."""
    chat, tracer = scripted(llm, service, project, tmp_path)
    vector = VectorMemoryBlock(
        name="messages",
        vector_store=TextVectorStore(),
        embed_model=ServerEmbedding(base_url=llm.base_url),
        similarity_top_k=1,
        retrieval_context_window=2,
    )
    profile = StaticMemoryBlock(name="profile", static_content="The user's name is Alex.")
    memory = trace_memory(short_memory("sam", [profile, vector]), tracer)

    said = tell(memory, [SHELTER, LOOKALIKE, CAR])
    memory.reset()  # a new chat begins: the car turn had not left the short-term queue
    questions = [
        Question(SATURDAYS_Q, "volunteers at the animal shelter", SHELTER, "RetrievalError",
                 GET + "messages", SATURDAYS_Q),
        Question(CAR_Q, "sold", CAR, "DeletionError", RESET, CAR),
    ]  # fmt: skip
    cases = ask_all(memory, chat, questions, said)
    assert tracer.flush(60)
    assert no_network == []

    # Two turns flushed into the vector store, one node each; the static block keeps nothing.
    inserts = _ops(neo4j_driver, project, "llama_index.vector_insert")
    assert len(inserts) == 2 and all(r["ins"] == r["outs"] == 1 for r in inserts)
    assert [SHELTER in r["made"][0] for r in inserts] == [True, False]
    gets = _ops(neo4j_driver, project, "llama_index.get:messages")
    # each search read the one node it found: for the Saturdays, the look-alike
    assert [len(r["memories"]) for r in gets] == [1, 1]
    assert gets[0]["memories"] == [inserts[1]["made"][0]]
    assert len(_ops(neo4j_driver, project, "llama_index.get:profile")) == 2
    resets = _ops(neo4j_driver, project, "llama_index.reset")
    assert [sorted(r["read"]) for r in resets] == [sorted([CAR, ACK])]

    assert_blamed(client, neo4j_driver, project, questions, cases)


def test_a_block_truncated_out_of_the_context_is_the_retrieval_blamed(
    service: ServiceHandle,
    client: httpx.Client,
    project: str,
    neo4j_driver: Driver,
    llm: ScriptedLLM,
    no_network: list[str],
    tmp_path: Path,
) -> None:
    """A fact block that may be truncated (priority 1) in a memory whose token limit its facts and
    the chat history pass: ``Memory`` drops the block from what ``get`` returns, so the facts the
    block held never reach the answer, and its retrieval is blamed, its context empty."""
    chat, tracer = scripted(llm, service, project, tmp_path)
    facts = FactExtractionMemoryBlock(name="facts", llm=chat, priority=1)
    memory = trace_memory(short_memory("lee", [facts], token_limit=12), tracer)

    said = tell(memory, [NURSE, DOG, BYE])
    assert memory.memory_blocks[0].facts == FACTS[NURSE] + FACTS[DOG]
    answer = ask(memory, chat, JOB_Q)
    assert answer.content == "I do not know."
    cases = {JOB_Q: memory.judge(JOB_Q, "nurse", answer, evidence=[said[NURSE]])}
    assert tracer.flush(60)
    assert no_network == []

    rows = neo4j_driver.execute_query(
        "MATCH (o:Operation {project: $p, name: $name})-[:PRODUCES]->(c:Unit) "
        "RETURN o.attributes AS attributes, c.content AS context",
        p=project,
        name=GET + "facts",
    ).records
    assert [(json.loads(r["attributes"])["truncated"], r["context"]) for r in rows] == [
        ("dropped", "")
    ]
    question = Question(JOB_Q, "nurse", NURSE, "RetrievalError", GET + "facts", JOB_Q)
    assert_blamed(client, neo4j_driver, project, [question], cases)


def test_a_chat_engine_on_the_traced_memory(
    service: ServiceHandle,
    client: httpx.Client,
    project: str,
    neo4j_driver: Driver,
    llm: ScriptedLLM,
    no_network: list[str],
    tmp_path: Path,
) -> None:
    """LlamaIndex's own ``SimpleChatEngine`` takes the traced memory as its ``BaseMemory``: it
    puts each turn and its reply and gets the context for each (no ``input``: the question is
    the last user message), and only the answer is recorded by hand."""
    chat, tracer = scripted(llm, service, project, tmp_path)
    facts = FactExtractionMemoryBlock(name="facts", llm=chat)
    memory = trace_memory(short_memory("ana", [facts]), tracer)
    engine = SimpleChatEngine.from_defaults(llm=chat, memory=memory)

    for said in (NURSE, SISTER_AND_FOOD, BYE):
        assert str(engine.chat(said)) == ACK
    turns = {u.content: u for u in memory.message_units()}
    reply = engine.chat(SISTER_Q)
    answer = memory.answer(str(reply))
    assert answer.content == "I do not know."
    cases = {SISTER_Q: memory.judge(SISTER_Q, "Denver", answer, evidence=[turns[SISTER_AND_FOOD]])}
    assert tracer.flush(60)
    assert no_network == []

    # Three flushes (each new turn flushes the one before); the answer read the last get only.
    flushes = _ops(neo4j_driver, project, "llama_index.flush")
    assert [sorted(r["read"]) for r in flushes] == [
        sorted([t, ACK]) for t in (NURSE, SISTER_AND_FOOD, BYE)
    ]
    answers = _ops(neo4j_driver, project, "answer")
    # the question (the last user message), the fact list's context and the chat history's
    assert [(r["read"], r["ins"]) for r in answers] == [([SISTER_Q], 3)]
    question = Question(
        SISTER_Q, "Denver", SISTER_AND_FOOD, "ExtractionError", EXTRACT, SISTER_AND_FOOD
    )
    assert_blamed(client, neo4j_driver, project, [question], cases)


def test_one_flush_feeds_every_block_each_with_its_own_calls(
    service: ServiceHandle,
    project: str,
    neo4j_driver: Driver,
    llm: ScriptedLLM,
    no_network: list[str],
    tmp_path: Path,
) -> None:
    """A fact block and a vector block on one memory: ``Memory`` hands both the same flushed
    turn at once (``asyncio.gather``); the flush is recorded once, both blocks' work consumes
    its batch, and each block's operation holds only its own calls (the fact block's LLM reply,
    the vector block's embedded text), not the other's."""
    chat, tracer = scripted(llm, service, project, tmp_path)
    facts = FactExtractionMemoryBlock(name="facts", llm=chat)
    vector = VectorMemoryBlock(
        name="messages",
        vector_store=TextVectorStore(),
        embed_model=ServerEmbedding(base_url=llm.base_url),
    )
    memory = trace_memory(short_memory("jo", [facts, vector]), tracer)
    tell(memory, [NURSE, DOG])
    assert tracer.flush(60)
    assert no_network == []

    rows = neo4j_driver.execute_query(
        "MATCH (f:Operation {project: $p, name: 'llama_index.flush'})-[:PRODUCES]->(b:Unit) "
        "<-[:CONSUMES]-(o:Operation) "
        "RETURN o.name AS name, [(o)-[:PRODUCES]->(u) | u.content] AS made ORDER BY name",
        p=project,
    ).records
    assert [(r["name"], r["made"]) for r in rows] == [
        (EXTRACT, FACTS[NURSE]),
        (
            INSERT,
            [f"<message role='user'>{NURSE}</message>\n<message role='assistant'>{ACK}</message>"],
        ),
    ]


def example_script(request: dict[str, Any]) -> Reply:
    """The model of the example: it keeps the food and drops the sister."""
    prompt = user_text(request)
    if "precise fact extraction system" in prompt:
        assert SISTER_AND_FOOD in prompt
        return Reply("<facts><fact>The user likes ramen.</fact></facts>")
    return Reply(answer_from_memory(prompt))


def test_llama_index_example_runs_and_its_case_is_attributed(
    service: ServiceHandle,
    client: httpx.Client,
    project: str,
    llm: ScriptedLLM,
    no_network: list[str],
) -> None:
    llm.script["answer"] = example_script  # type: ignore[attr-defined]
    example = runpy.run_path(str(REPO / "examples" / "llama_index_memory.py"))
    case_id = example["main"](service.url, project, ScriptedChat(base_url=llm.base_url))
    assert no_network == []
    assert_attributed(client, project, case_id, ("ExtractionError", EXTRACT))


def test_a_memory_is_traced_once() -> None:
    memory = short_memory("kim", [])
    traced = trace_memory(memory, Tracer(MemTraceClient("http://127.0.0.1:9", project="p")))
    with pytest.raises(TypeError, match="traced already"):
        trace_memory(traced, traced.tracer)
    with pytest.raises(TypeError, match="not dict"):
        trace_memory({}, traced.tracer)  # type: ignore[arg-type]


def _ops(driver: Driver, project: str, name: str) -> list[dict[str, Any]]:
    """The operations of that name in the order they ran: the messages and queries they read,
    the memories they read, what they made, and how many units in and out."""
    rows = driver.execute_query(
        "MATCH (o:Operation {project: $p, name: $name}) "
        "RETURN o.id AS id, COUNT { (o)-[:CONSUMES]->() } AS ins, "
        "COUNT { (o)-[:PRODUCES]->() } AS outs, "
        "[(o)-[:CONSUMES]->(u:Unit) WHERE u.kind IN ['message', 'query'] | u.content] AS read, "
        "[(o)-[:CONSUMES]->(u:Unit {kind: 'memory'}) | u.content] AS memories, "
        "[(o)-[:PRODUCES]->(u:Unit) | u.content] AS made ORDER BY o.ts",
        p=project,
        name=name,
    ).records
    return [r.data() for r in rows]
