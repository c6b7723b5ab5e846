"""A scripted OpenAI-compatible chat server for tests and benchmarks.

It speaks real HTTP (uvicorn in a background thread, on 127.0.0.1 and a port the OS picks), so the
real ``openai`` client, its timeouts and its error mapping run unchanged. What the assistant says
comes from an ``answer(request_json) -> str | Reply`` callable (a :class:`Reply` also sets the
``finish_reason``, e.g. ``"length"`` as a server's output cap does, or calls the request's tools,
as a model answering a LangChain ``bind_tools`` request does); one-shot failures pushed with
``push_failure`` are served first, in order, one per request. It also serves the Responses API
(``POST /v1/responses``, what the OpenAI Agents SDK calls by default), non-streamed: the request
is shown to ``answer`` as the chat request it amounts to (``as_chat_request``), so one script
serves both APIs. Every request is recorded, failed
ones included, so ``len(llm.requests)`` is the number of HTTP attempts a client made. In a
``with llm.replies_held_until(n):`` block the first ``n`` replies wait until ``n`` requests are in
flight together: a test of concurrent calls proves they overlapped.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from service.attribution.judges.llm import unit_ids_in_prompt


@dataclass(frozen=True)
class ToolCall:
    """One call of a tool the request offered: its name and arguments (sent as JSON text)."""

    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class Reply:
    """What the assistant says and the ``finish_reason`` the server reports with it; with
    ``tool_calls``, the tools it calls (``finish_reason`` then ``"tool_calls"``)."""

    content: str = ""
    finish_reason: str = "stop"
    tool_calls: tuple[ToolCall, ...] = ()


Answer = Callable[[dict[str, Any]], str | Reply]
Failure = Literal["timeout", "429", "500", "404", "malformed", "schema", "runaway"]

MALFORMED = "Sure! The units that carry it are the first two."
WRONG_SCHEMA = '{"answers": [{"unit": "x", "carries": "yes"}]}'
RUNAWAY = '{"verdicts": {' + '"carries": true, ' * 2000
"""A degenerate answer as a small model gives it: the same fragment until the token cap."""


def user_text(request: dict[str, Any]) -> str:
    """Every user message of a request, joined: where the units and repair notes are."""
    return "\n".join(
        str(m.get("content") or "") for m in request.get("messages", []) if m.get("role") == "user"
    )


def oracle_from_ids(carrier_ids: set[str]) -> Answer:
    """An ``answer`` that says carries=true exactly for the listed units in ``carrier_ids``."""

    def answer(request: dict[str, Any]) -> str:
        ids = dict.fromkeys(unit_ids_in_prompt(user_text(request)))
        verdicts = [{"id": uid, "carries": uid in carrier_ids} for uid in ids]
        return json.dumps({"verdicts": verdicts})

    return answer


def _part_text(content: Any) -> str:
    """A Responses API content (a string, or parts with ``text``) as plain text."""
    if isinstance(content, list):
        return "".join(str(p.get("text") or "") for p in content if isinstance(p, dict))
    return "" if content is None else str(content)


def as_chat_request(body: dict[str, Any]) -> dict[str, Any]:
    """A Responses API request as the chat completions request it amounts to: ``instructions``
    a system message, input messages as messages, ``function_call`` items an assistant's tool
    calls, ``function_call_output`` items tool messages, function tools in the chat form."""
    messages: list[dict[str, Any]] = []
    if body.get("instructions"):
        messages.append({"role": "system", "content": body["instructions"]})
    raw = body.get("input")
    for item in [{"role": "user", "content": raw}] if isinstance(raw, str) else raw or []:
        kind = item.get("type", "message")
        if kind == "function_call":
            call = {"name": item.get("name"), "arguments": item.get("arguments")}
            messages.append(
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {"id": item.get("call_id"), "type": "function", "function": call}
                    ],
                }
            )
        elif kind == "function_call_output":
            output = _part_text(item.get("output"))
            messages.append(
                {"role": "tool", "tool_call_id": item.get("call_id"), "content": output}
            )
        elif kind == "message":
            messages.append(
                {"role": item.get("role", "user"), "content": _part_text(item.get("content"))}
            )
    tools = [
        {"type": "function", "function": {"name": t.get("name"), "parameters": t.get("parameters")}}
        for t in body.get("tools") or []
        if t.get("type") == "function"
    ]
    return {"model": body.get("model"), "messages": messages, "tools": tools}


def tool_names(request: dict[str, Any]) -> list[str]:
    """The names of the tools a request offers the model (OpenAI's ``tools`` field)."""
    return [t["function"]["name"] for t in request.get("tools") or [] if t.get("function")]


def bag_of_words_vector(text: str, dims: int = 64) -> list[float]:
    """A text's lower-cased words counted into ``dims`` buckets by a stable hash."""
    vector = [0.0] * dims
    for word in re.findall(r"[a-z0-9]+", text.lower()):
        vector[int(hashlib.md5(word.encode()).hexdigest(), 16) % dims] += 1.0
    return vector


def _tokens(text: str) -> int:
    return max(1, len(text) // 4)


@dataclass
class ScriptedLLM:
    """The server's script and record; ``base_url`` ends in ``/v1`` as the openai client expects."""

    answer: Answer
    timeout_sleep_s: float = 3.0
    refused_formats: set[str] = field(default_factory=set)
    """``response_format`` types answered with a 400, as servers without JSON schema do."""
    latency_s: float = 0.0
    base_url: str = ""
    requests: list[dict[str, Any]] = field(default_factory=list)
    embedding_requests: list[dict[str, Any]] = field(default_factory=list)
    _failures: deque[Failure] = field(default_factory=deque)
    _stopping: threading.Event = field(default_factory=threading.Event)
    _served: int = 0
    in_flight: int = 0
    max_in_flight: int = 0
    """The most chat requests the server was handling at once."""
    _together: int = 0
    _together_timeout_s: float = 0.0

    @contextmanager
    def replies_held_until(self, n: int, *, timeout_s: float = 10.0) -> Iterator[None]:
        """In the block, hold each chat reply until ``n`` chat requests are in flight at once,
        so the first ``n`` are answered only if a client sent them concurrently; if they are not
        all in flight within ``timeout_s``, the held ones are answered with a 504 saying so (a
        clear failure, not a hang). Requests after the first ``n`` are not held."""
        self._together, self._together_timeout_s = n, timeout_s
        self.max_in_flight = self.in_flight  # counted from here: the fixture serves many tests
        try:
            yield
        finally:
            self._together = 0

    async def _held(self) -> str | None:
        """Wait (see ``replies_held_until``); the error to answer with if the others never came."""
        deadline = time.monotonic() + self._together_timeout_s
        while self.in_flight < self._together and self.max_in_flight < self._together:
            if time.monotonic() > deadline or self._stopping.is_set():
                return (
                    f"scripted hold: {self.in_flight} of {self._together} requests in flight "
                    f"after {self._together_timeout_s}s; they did not overlap"
                )
            await asyncio.sleep(0.01)
        return None

    def push_failure(self, mode: Failure, times: int = 1) -> None:
        """Serve ``mode`` to the next ``times`` requests, after any failures already queued."""
        self._failures.extend([mode] * times)

    def clear_failures(self) -> None:
        """Drop the failures still queued (so one test's leftovers never reach the next)."""
        self._failures.clear()

    async def handle_embeddings(self, request: Request) -> JSONResponse:
        """Deterministic embeddings: words hashed into 64 buckets, so texts sharing words are
        close. Not a language model; enough to exercise the real client and the fusion."""
        body: dict[str, Any] = await request.json()
        self.embedding_requests.append(body)
        texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
        data = [
            {"object": "embedding", "index": i, "embedding": bag_of_words_vector(text)}
            for i, text in enumerate(texts)
        ]
        tokens = sum(_tokens(t) for t in texts)
        return JSONResponse(
            {
                "object": "list",
                "data": data,
                "model": body.get("model", "scripted"),
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
            }
        )

    def prompts(self) -> list[str]:
        """The user text of every recorded request, in order."""
        return [user_text(r) for r in self.requests]

    async def _sleep(self, seconds: float) -> None:
        # In small steps, so that stopping the server never waits on a "timeout" request.
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and not self._stopping.is_set():
            await asyncio.sleep(0.02)

    async def handle(self, request: Request) -> JSONResponse:
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            return await self._handle(request)
        finally:
            self.in_flight -= 1

    async def _handle(self, request: Request) -> JSONResponse:
        body: dict[str, Any] = await request.json()
        self.requests.append(body)
        if self._together:
            not_together = await self._held()
            if not_together is not None:
                return JSONResponse({"error": {"message": not_together}}, status_code=504)
        mode = self._failures.popleft() if self._failures else None
        if self.latency_s:
            await self._sleep(self.latency_s)
        if mode == "timeout":
            await self._sleep(self.timeout_sleep_s)
        refused = (body.get("response_format") or {}).get("type") in self.refused_formats
        if refused and mode is None:
            error = {"error": {"message": "response_format json_schema is not supported"}}
            return JSONResponse(error, status_code=400)
        if mode == "404":
            error = {"error": {"message": "model not found", "code": "model_not_found"}}
            return JSONResponse(error, status_code=404)
        if mode in ("429", "500"):
            kind = "rate_limit_exceeded" if mode == "429" else "server_error"
            error = {"error": {"message": f"scripted {mode}", "type": kind, "code": kind}}
            return JSONResponse(error, status_code=int(mode))
        if mode == "malformed":
            content = MALFORMED
        elif mode == "schema":
            content = WRONG_SCHEMA
        elif mode == "runaway":
            content = RUNAWAY
        else:
            said = self.answer(body)
            if isinstance(said, Reply):
                completion = self._completion(body, said.content, said.finish_reason)
                if said.tool_calls:
                    self._call_tools(completion, said.tool_calls)
                return JSONResponse(completion)
            content = said
        return JSONResponse(self._completion(body, content))

    async def handle_responses(self, request: Request) -> JSONResponse:
        """``POST /v1/responses``: the script answers the chat form of the request; its text
        becomes an ``output_text`` message, its tool calls ``function_call`` items. Failures
        pushed with ``push_failure`` apply here too (as an error status), but not the holds."""
        body: dict[str, Any] = await request.json()
        chat = as_chat_request(body)
        self.requests.append(chat)
        mode = self._failures.popleft() if self._failures else None
        if mode in ("429", "500", "404"):
            error = {"error": {"message": f"scripted {mode}", "code": f"scripted_{mode}"}}
            return JSONResponse(error, status_code=int(mode))
        said = self.answer(chat)
        reply = said if isinstance(said, Reply) else Reply(content=said)
        self._served += 1
        n = self._served
        output: list[dict[str, Any]] = []
        if reply.content:
            text = {"type": "output_text", "text": reply.content, "annotations": []}
            output.append(
                {
                    "type": "message",
                    "id": f"msg_scripted_{n}",
                    "role": "assistant",
                    "status": "completed",
                    "content": [text],
                }
            )
        for i, call in enumerate(reply.tool_calls):
            output.append(
                {
                    "type": "function_call",
                    "id": f"fc_scripted_{n}_{i}",
                    "call_id": f"call_{n}_{i}",
                    "name": call.name,
                    "arguments": json.dumps(call.arguments),
                    "status": "completed",
                }
            )
        prompt = "".join(str(m.get("content") or "") for m in chat["messages"])
        tokens_in, tokens_out = _tokens(prompt), _tokens(reply.content)
        return JSONResponse(
            {
                "id": f"resp_scripted_{n}",
                "object": "response",
                "created_at": int(time.time()),
                "model": body.get("model", "scripted"),
                "instructions": body.get("instructions"),
                "status": "completed",
                "output": output,
                "parallel_tool_calls": True,
                "tool_choice": "auto",
                "tools": body.get("tools") or [],
                "usage": {
                    "input_tokens": tokens_in,
                    "input_tokens_details": {"cached_tokens": 0},
                    "output_tokens": tokens_out,
                    "output_tokens_details": {"reasoning_tokens": 0},
                    "total_tokens": tokens_in + tokens_out,
                },
            }
        )

    def _call_tools(self, completion: dict[str, Any], calls: tuple[ToolCall, ...]) -> None:
        """Turn a completion into tool calls, as OpenAI sends them (arguments as JSON text)."""
        choice = completion["choices"][0]
        choice["finish_reason"] = "tool_calls"
        choice["message"]["content"] = choice["message"]["content"] or None
        choice["message"]["tool_calls"] = [
            {
                "id": f"call_{self._served}_{i}",
                "type": "function",
                "function": {"name": call.name, "arguments": json.dumps(call.arguments)},
            }
            for i, call in enumerate(calls)
        ]

    def _completion(
        self, body: dict[str, Any], content: str, finish_reason: str = "stop"
    ) -> dict[str, Any]:
        self._served += 1
        prompt = "".join(str(m.get("content") or "") for m in body.get("messages", []))
        cap = body.get("max_tokens") or body.get("max_completion_tokens")
        finish = finish_reason
        if cap is not None and _tokens(content) > cap:  # as a server cuts at max_tokens
            content, finish = content[: cap * 4], "length"
        usage = {"prompt_tokens": _tokens(prompt), "completion_tokens": _tokens(content)}
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        return {
            "id": f"chatcmpl-scripted-{self._served}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "scripted"),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "finish_reason": finish,
                }
            ],
            "usage": usage,
        }


@contextmanager
def scripted_llm(answer: Answer, *, timeout_sleep_s: float = 3.0) -> Iterator[ScriptedLLM]:
    """Run a scripted server for the ``with`` block; it stops (and drops connections) on exit."""
    llm = ScriptedLLM(answer, timeout_sleep_s=timeout_sleep_s)
    routes = (
        [
            Route(path, llm.handle, methods=["POST"])
            for path in ("/v1/chat/completions", "/chat/completions")
        ]
        + [
            Route(path, llm.handle_responses, methods=["POST"])
            for path in ("/v1/responses", "/responses")
        ]
        + [
            Route(path, llm.handle_embeddings, methods=["POST"])
            for path in ("/v1/embeddings", "/embeddings")
        ]
    )
    config = uvicorn.Config(
        Starlette(routes=routes), log_level="warning", lifespan="off", timeout_graceful_shutdown=1
    )
    server = uvicorn.Server(config)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))  # bound here, so the port is known and nobody can take it first
    port = sock.getsockname()[1]
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("scripted LLM server did not start")
        time.sleep(0.01)
    llm.base_url = f"http://127.0.0.1:{port}/v1"
    try:
        yield llm
    finally:
        llm._stopping.set()
        server.should_exit = True
        thread.join(timeout=5)
        sock.close()
