"""The memory system the closed loop optimises: extraction with one prompt, BM25 retrieval,
answering with another, every step traced into MemTrace with the prompt version it ran with.

It talks to its model only through the OpenAI-compatible API, with the service's one chat
client (``service.llm``), so the same code runs against the simulated model
(``benchmarks.closed_loop.model``) or a real endpoint. Every call bounds its answer
(``max_tokens``).
One extraction call per conversation turn, one answer call per question; the cases are judged
by ``contains_expected`` (every word of the gold answer in the answer).

A real model does not always answer the JSON it is asked for: the extraction's answer is read
tolerantly (:func:`extracted_facts`), and a turn whose answer holds no ``{"facts": [...]}`` object
stores no memory and is counted (``RunResult.unusable_extractions``), not fatal.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from memtrace_client import Prompt, Tracer
from memtrace_client.adapters.judging import contains_expected
from memtrace_client.models import UnitIn

from benchmarks.datasets.bm25 import BM25
from benchmarks.datasets.locomo_source import QA, LocomoConversation
from service.llm.blocking import BlockingChat
from service.llm.text import first_json_object

EXTRACTION = "fact-extraction"
ANSWERING = "answer"
TOP_K = 5
MAX_TOKENS = {EXTRACTION: 512, ANSWERING: 128}
"""Each step's output cap: the facts of one turn; an answer of a few words."""

INITIAL_PROMPTS = {
    EXTRACTION: (
        "You extract facts worth remembering from one turn of a conversation between two "
        "people. The turn is {turn}, said by {speaker} on {session_date}. Write each fact as a "
        'short sentence naming who it is about. Answer with JSON: {"facts": ["..."]}.'
    ),
    ANSWERING: (
        "You answer a question about two people's conversations from the memories retrieved "
        "for it. Question: {question}. Memories: {memories}. Answer in a few words."
    ),
}
"""Round 0's templates. Their slots are sent as a JSON user message, the template as the system
message (what a chat model's custom prompt looks like)."""


@dataclass
class RunResult:
    """One conversation run: how many questions were asked and answered right, and how many
    extraction answers held no usable facts."""

    asked: int = 0
    correct: int = 0
    llm_calls: int = 0
    extractions: int = 0
    unusable_extractions: int = 0
    case_ids: list[str] = field(default_factory=list)


def extracted_facts(answer: str) -> list[str] | None:
    """The facts of an extraction answer (its first JSON object's ``facts`` list); None when it
    has none, which the run counts instead of failing on."""
    found = first_json_object(answer)
    facts = found.get("facts") if found is not None else None
    return [str(f) for f in facts] if isinstance(facts, list) else None


def questions(conversation: LocomoConversation, sessions: int | None) -> list[QA]:
    """The answerable questions (LoCoMo categories 1-4) whose evidence lies in the first
    ``sessions`` sessions (all when None)."""
    kept = {s.number for s in conversation.sessions[:sessions]}
    return [
        q
        for q in conversation.qa
        if q.category != 5
        and q.answer
        and q.evidence
        and all(int(e.split(":")[0][1:]) in kept for e in q.evidence)
    ]


def run_conversation(
    conversation: LocomoConversation,
    prompts: dict[str, Prompt],
    tracer: Tracer,
    model: BlockingChat,
    sessions: int | None = None,
    tag: str = "",
) -> RunResult:
    """Build the memory from the conversation and answer its questions, traced."""
    result = RunResult()
    said: dict[str, UnitIn] = {}
    memories: list[UnitIn] = []

    def chat(prompt: Prompt, slots: dict[str, object]) -> str:
        result.llm_calls += 1
        answer = model.complete(
            [
                {"role": "system", "content": prompt.text},
                {"role": "user", "content": json.dumps(slots, ensure_ascii=False)},
            ],
            max_tokens=MAX_TOKENS[prompt.name],
        )
        return answer.content

    for session in conversation.sessions[:sessions]:
        for turn in session.turns:
            text = turn.text + (f" [image: {turn.caption}]" if turn.caption else "")
            message = tracer.message(
                f"{turn.speaker}: {text}", ts=session.when, name=turn.speaker, dia_id=turn.dia_id
            )
            said[turn.dia_id] = message
            slots: dict[str, object] = {
                "turn": text,
                "speaker": turn.speaker,
                "session_date": session.when.isoformat(),
            }
            with tracer.operation(
                "extract_facts",
                kind="extraction",
                inputs=[message],
                prompt=prompts[EXTRACTION],
                session_id=f"{conversation.name}-{session.number}",
            ) as op:
                facts = extracted_facts(chat(prompts[EXTRACTION], slots))
                result.extractions += 1
                if facts is None:  # traced as an extraction that captured nothing
                    result.unusable_extractions += 1
                    facts = []
                for i, fact in enumerate(facts):
                    memory = tracer.memory(
                        str(fact), memory_id=f"{tag}{conversation.name}:{turn.dia_id}:{i}"
                    )
                    memories.append(memory)
                    op.output(memory)

    index = BM25([m.content for m in memories]) if memories else None
    for qa in questions(conversation, sessions):
        query = tracer.query(qa.question)
        found = [memories[i] for i in index.top(qa.question, TOP_K)] if index else []
        with tracer.operation("retrieve", kind="retrieval", inputs=[query, *found]) as op:
            context = tracer.context("\n".join(m.content for m in found))
            op.output(context)
        slots = {"question": qa.question, "memories": [m.content for m in found]}
        with tracer.operation(
            "answer", kind="response", inputs=[query, context], prompt=prompts[ANSWERING]
        ) as op:
            given = tracer.answer(chat(prompts[ANSWERING], slots))
            op.output(given)
        right = contains_expected(qa.question, qa.answer, given.content)
        result.asked += 1
        result.correct += right
        result.case_ids.append(
            tracer.case(
                qa.question,
                qa.answer,
                given,
                "passed" if right else "failed",
                evidence_units=[said[e] for e in qa.evidence if e in said],
                category=qa.category,
            )
        )
    return result
