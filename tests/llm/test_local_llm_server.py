"""What a real llama.cpp server with a real small model does with the requests the LLM judge sends.

The server is xllamacpp's prebuilt llama.cpp with SmolLM2-135M-Instruct (tests/support/
llama_server.py), through the real ``openai`` client. These are the server's properties the judge
builds on: a strict ``json_schema`` constrains the answer (an object keyed by the asked unit ids
gets each id exactly once; an ``enum`` of ids keeps an array of verdicts from inventing ids),
``max_tokens`` bounds the answer and says so in ``finish_reason``, requests beyond the one slot
wait instead of failing, and a wrong path is a 404 while a wrong model name is not checked at all.
What the model says is not checked: SmolLM2 is no better than chance at the verdicts themselves.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import openai
import pytest

from tests.support.llama_server import LlamaServer

QUESTION = "Where did Caroline move from?"
UNITS = {
    "msg-7f3a": "Caroline said she moved from Sweden four years ago.",
    "mem-02bc": "Melanie painted a sunset at the lake last weekend.",
}


def keyed_schema(ids: list[str]) -> dict[str, Any]:
    """``{"<id>": true|false, ...}``: every asked id exactly once, nothing else."""
    return {
        "type": "object",
        "properties": {uid: {"type": "boolean"} for uid in ids},
        "required": ids,
        "additionalProperties": False,
    }


def array_schema(ids: list[str]) -> dict[str, Any]:
    """``{"verdicts": [{"id", "carries"}, ...]}`` with ``id`` an ``enum`` of the asked ids.

    ``enum`` keeps out invented ids but not repeated ones, and without ``maxItems`` the list
    has no end: SmolLM2 repeats one id until the token limit."""
    verdict = {
        "type": "object",
        "properties": {"id": {"type": "string", "enum": ids}, "carries": {"type": "boolean"}},
        "required": ["id", "carries"],
        "additionalProperties": False,
    }
    verdicts = {"type": "array", "items": verdict, "minItems": len(ids), "maxItems": len(ids)}
    return {
        "type": "object",
        "properties": {"verdicts": verdicts},
        "required": ["verdicts"],
        "additionalProperties": False,
    }


def strict(schema: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "json_schema",
        "json_schema": {"name": "verdicts", "strict": True, "schema": schema},
    }


def messages(question: str, units: dict[str, str]) -> list[dict[str, str]]:
    listed = "\n".join(f"[{uid}] {text}" for uid, text in units.items())
    return [
        {"role": "system", "content": "You judge memory units. Answer in JSON."},
        {
            "role": "user",
            "content": f"Question: {question}\nUnits:\n{listed}\n"
            "For each unit, does it state the answer to the question?",
        },
    ]


@pytest.fixture(scope="module")
def chat(llama_server: LlamaServer) -> Iterator[openai.OpenAI]:
    with openai.OpenAI(
        base_url=llama_server.base_url, api_key="unused", max_retries=0, timeout=300
    ) as client:
        yield client


def test_a_schema_keyed_by_unit_id_answers_every_asked_id_once(
    chat: openai.OpenAI, llama_server: LlamaServer
) -> None:
    ids = list(UNITS)
    reply = chat.chat.completions.create(  # type: ignore[call-overload]
        model=llama_server.model,
        messages=messages(QUESTION, UNITS),
        response_format=strict(keyed_schema(ids)),
        max_tokens=200,
        temperature=0,
    )
    choice = reply.choices[0]
    assert choice.finish_reason == "stop", choice.message.content
    verdicts = json.loads(choice.message.content or "")
    assert sorted(verdicts) == sorted(ids)
    assert all(isinstance(carries, bool) for carries in verdicts.values())
    assert reply.usage is not None
    assert reply.usage.prompt_tokens > 0
    assert 0 < reply.usage.completion_tokens <= 200


def test_an_enum_of_ids_keeps_an_array_of_verdicts_to_the_asked_ids(
    chat: openai.OpenAI, llama_server: LlamaServer
) -> None:
    ids = list(UNITS)
    reply = chat.chat.completions.create(  # type: ignore[call-overload]
        model=llama_server.model,
        messages=messages(QUESTION, UNITS),
        response_format=strict(array_schema(ids)),
        max_tokens=200,
        temperature=0,
    )
    verdicts = json.loads(reply.choices[0].message.content or "")["verdicts"]
    assert len(verdicts) == len(ids)
    assert {v["id"] for v in verdicts} <= set(ids)
    assert all(isinstance(v["carries"], bool) for v in verdicts)


def test_max_tokens_cuts_the_answer_and_says_length(
    chat: openai.OpenAI, llama_server: LlamaServer
) -> None:
    reply = chat.chat.completions.create(  # type: ignore[call-overload]
        model=llama_server.model,
        messages=messages(QUESTION, UNITS),
        response_format=strict(keyed_schema(list(UNITS))),
        max_tokens=5,
        temperature=0,
    )
    choice = reply.choices[0]
    assert choice.finish_reason == "length"
    assert reply.usage is not None
    assert reply.usage.completion_tokens <= 5
    with pytest.raises(json.JSONDecodeError):  # a cut answer is not a verdict
        json.loads(choice.message.content or "")


def test_requests_beyond_the_one_slot_wait_and_all_succeed(
    chat: openai.OpenAI, llama_server: LlamaServer
) -> None:
    def ask(i: int) -> str | None:
        reply = chat.chat.completions.create(
            model=llama_server.model,
            messages=[{"role": "user", "content": f"Say the number {i}."}],
            max_tokens=4,
            temperature=0,
        )
        return reply.choices[0].finish_reason

    with ThreadPoolExecutor(3) as pool:
        reasons = list(pool.map(ask, range(3)))
    assert all(reason in {"stop", "length"} for reason in reasons), reasons


def test_models_lists_the_alias_and_a_wrong_path_is_404(llama_server: LlamaServer) -> None:
    with openai.OpenAI(base_url=llama_server.base_url, api_key="unused", max_retries=0) as ok:
        assert [m.id for m in ok.models.list()] == [llama_server.model]
    wrong = llama_server.base_url.removesuffix("/v1") + "/no-such-prefix/v1"
    with (
        openai.OpenAI(base_url=wrong, api_key="unused", max_retries=0) as client,
        pytest.raises(openai.NotFoundError),
    ):
        client.chat.completions.create(
            model=llama_server.model,
            messages=[{"role": "user", "content": "hi"}],
            max_tokens=4,
        )


def test_a_wrong_model_name_is_served_by_the_loaded_model(
    chat: openai.OpenAI, llama_server: LlamaServer
) -> None:
    """llama.cpp's one-model server ignores the name: a typo gives no 404, only /v1/models
    shows which model answers."""
    reply = chat.chat.completions.create(
        model="no-such-model",
        messages=[{"role": "user", "content": "hi"}],
        max_tokens=4,
        temperature=0,
    )
    assert reply.model == llama_server.model
