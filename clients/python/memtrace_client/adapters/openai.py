"""Trace an ``openai.OpenAI`` / ``AsyncOpenAI`` client: its chat and embeddings calls become
operations, with lineage.

    from openai import OpenAI
    from memtrace_client.adapters.openai import trace_openai
    llm = trace_openai(OpenAI(), tracer)   # the same client, instrumented in place

``llm.chat.completions.create(...)`` then records one operation (kind ``response`` unless told
otherwise; the tracer's ``system``, with ``provider: openai`` and the model in its attributes):
each message is an input unit (a ``prompt`` for system/developer messages, else a
``message``; the same role and text always name the same unit), and every unit recorded before
whose text appears in the messages (a memory, a retrieved context, an earlier completion) is an
input too: the call consumed it (``memtrace_client.adapters.lineage``). Each choice's text is an
output unit, of the kind the operation produces (an ``answer`` for a response, a ``memory`` for
an extraction, ...). ``llm.embeddings.create(...)`` records an ``embedding`` operation from the
input texts to one unit per vector (its text, with ``dimensions`` and the model; the vectors
themselves are not sent).

The next step consumes what a call produced through ``output_unit(response)``, the id of its
first choice's unit (``output_unit(response, n)`` for choice ``n``):

    facts = llm.chat.completions.create(..., memtrace_kind="extraction")
    with tracer.operation("store_memory", kind="update", inputs=[output_unit(facts)]) as op:
        op.output(tracer.memory(facts.choices[0].message.content, memory_id="m1"))

Name the step, so an attribution says which call it blames: two extra keyword arguments, taken
out before the call reaches OpenAI: ``memtrace_name="extract_facts"`` and
``memtrace_kind="extraction"`` (default name ``openai.chat.<model>``). A streamed call
(``stream=True``) is recorded with its inputs and ``stream: true`` but without outputs.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from memtrace_client.adapters.lineage import TextIndex, index_of
from memtrace_client.models import OperationKind, UnitIn, UnitKind
from memtrace_client.tracer import RETURNED_KIND, Operation, Tracer

PROVIDER = "openai"
"""Stamped as ``provider`` in each call's attributes; the operation keeps the tracer's ``system``
(the memory system being traced, which is what reports group by, not the model vendor)."""
C = TypeVar("C")
_PROMPT_ROLES = ("system", "developer")


def _digest(*parts: str) -> str:
    return hashlib.sha1("\x1f".join(parts).encode()).hexdigest()[:16]


def _text(content: Any) -> str:
    """A message's content as text: a string, or the text parts of a list of parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(p.get("text", "")) for p in content if isinstance(p, dict) and "text" in p
        )
    return "" if content is None else str(content)


class _Recorder:
    """What the wrappers share: the tracer, its text index, and the unit-making rules."""

    def __init__(self, tracer: Tracer) -> None:
        self.tracer = tracer
        self.index: TextIndex = index_of(tracer)

    def message_units(self, messages: Any) -> list[str]:
        """Input unit ids of a chat call: the units its texts contain, then one per message."""
        ids: list[str] = []
        for message in messages or []:
            role = str(message.get("role", "user")) if isinstance(message, dict) else "user"
            text = _text(message.get("content") if isinstance(message, dict) else message)
            if not text:
                continue
            ids += [uid for uid in self.index.units_in(text) if uid not in ids]
            known = self.index.unit_for(text)
            if known is None:
                kind: UnitKind = "prompt" if role in _PROMPT_ROLES else "message"
                unit = self.tracer.unit(
                    kind, text, id=f"openai:{role}:{_digest(role, text)}", stamp=False, role=role
                )
                known = unit.id
            if known not in ids:
                ids.append(known)
        return ids

    @contextmanager
    def chat(self, kwargs: dict[str, Any]) -> Iterator[tuple[Operation, OperationKind]]:
        name = kwargs.pop("memtrace_name", None) or f"openai.chat.{kwargs.get('model', '?')}"
        kind: OperationKind = kwargs.pop("memtrace_kind", None) or "response"
        inputs = self.message_units(kwargs.get("messages"))
        with self.tracer.operation(
            name, kind=kind, inputs=inputs, provider=PROVIDER, model=kwargs.get("model")
        ) as op:
            if kwargs.get("stream"):
                op.set(stream=True)
            yield op, kind

    def chat_outputs(self, op: Operation, kind: OperationKind, response: Any) -> None:
        if not hasattr(response, "choices"):  # a stream: its text is not known here
            return
        for choice in response.choices:
            text = _choice_text(choice)
            if text:
                unit_kind = RETURNED_KIND.get(kind, "other")
                op.output(self.tracer.unit(unit_kind, text, id=_output_id(response, choice)))
        usage = getattr(response, "usage", None)
        if usage is not None:
            op.set(input_tokens=usage.prompt_tokens, output_tokens=usage.completion_tokens)
        op.set(response_model=getattr(response, "model", None))

    @contextmanager
    def embedding(self, kwargs: dict[str, Any]) -> Iterator[tuple[Operation, list[str]]]:
        name = kwargs.pop("memtrace_name", None) or "openai.embeddings"
        kind: OperationKind = kwargs.pop("memtrace_kind", None) or "embedding"
        raw = kwargs.get("input")
        texts = [raw] if isinstance(raw, str) else [t for t in raw or [] if isinstance(t, str)]
        inputs: list[str] = []
        for text in texts:
            known = (
                self.index.unit_for(text)
                or self.tracer.unit(
                    "other", text, id=f"openai:input:{_digest(text)}", stamp=False
                ).id
            )
            inputs.append(known)
        with self.tracer.operation(
            name, kind=kind, inputs=inputs, provider=PROVIDER, model=kwargs.get("model")
        ) as op:
            yield op, texts

    def embedding_outputs(self, op: Operation, texts: list[str], response: Any) -> None:
        model = getattr(response, "model", None) or "?"
        for item in getattr(response, "data", []):
            text = texts[item.index] if item.index < len(texts) else ""
            dims = len(item.embedding) if isinstance(item.embedding, list) else None
            unit: UnitIn = self.tracer.unit(
                "other",
                text,
                id=f"openai:embedding:{_digest(model, text)}",
                stamp=False,
                dimensions=dims,
                model=model,
                memtrace_not_indexed=True,  # NOT_INDEXED: its text is its input's
            )
            op.output(unit)


def _choice_text(choice: Any) -> str:
    """A choice's text: its content, else its tool calls as JSON."""
    message = choice.message
    text = message.content or ""
    if not text and getattr(message, "tool_calls", None):
        text = json.dumps([c.model_dump(mode="json") for c in message.tool_calls])
    return str(text)


def _output_id(response: Any, choice: Any) -> str:
    """The id of a choice's output unit, computed from the response alone, so ``output_unit``
    finds it again with no state kept. The text is in the digest: a server that reuses
    completion ids (some OpenAI-compatible ones do) cannot make two texts share a unit id."""
    parts = (str(getattr(response, "id", "")), str(getattr(response, "created", "")))
    return f"openai:output:{_digest(*parts, str(choice.index), _choice_text(choice))}"


def output_unit(response: Any, choice: int = 0) -> str:
    """The id of the unit holding choice ``choice``'s text of a chat completion a traced client
    returned: give it to the next step as an input, so it consumes what this call produced
    (``tracer.operation("store", kind="update", inputs=[output_unit(response)])``).
    ``ValueError`` for a streamed call (its text is not known to the adapter) or a choice
    without text (nothing was recorded)."""
    if not hasattr(response, "choices"):
        raise ValueError("a streamed call is recorded without outputs: there is no unit")
    picked = next((c for c in response.choices if c.index == choice), None)
    if picked is None or not _choice_text(picked):
        raise ValueError(f"choice {choice} has no text: no output unit was recorded")
    return _output_id(response, picked)


def _is_async(method: Callable[..., Any]) -> bool:
    # openai decorates its async methods (functools.wraps): ask the function underneath.
    return inspect.iscoroutinefunction(inspect.unwrap(method))


def _wrap(method: Callable[..., Any], run: Callable[..., Any]) -> Callable[..., Any]:
    """``method`` replaced by ``run(method, kwargs)``, async when ``method`` is."""
    if _is_async(method):

        @functools.wraps(method)
        async def call_async(*args: Any, **kwargs: Any) -> Any:
            return await run(method, args, kwargs)

        return call_async

    @functools.wraps(method)
    def call(*args: Any, **kwargs: Any) -> Any:
        return run(method, args, kwargs)

    return call


def trace_openai(client: C, tracer: Tracer) -> C:
    """Instrument ``client`` (an ``OpenAI`` or ``AsyncOpenAI``) in place and return it.
    Instrumenting it again changes nothing."""
    if getattr(client, "_memtrace_traced", False):
        return client
    recorder = _Recorder(tracer)
    completions = client.chat.completions  # type: ignore[attr-defined]
    embeddings = client.embeddings  # type: ignore[attr-defined]
    is_async = _is_async(completions.create)

    def chat(method: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        with recorder.chat(kwargs) as (op, kind):
            response = method(*args, **kwargs)
            recorder.chat_outputs(op, kind, response)
            return response

    async def achat(method: Callable[..., Any], args: tuple[Any, ...], kw: dict[str, Any]) -> Any:
        with recorder.chat(kw) as (op, kind):
            response = await method(*args, **kw)
            recorder.chat_outputs(op, kind, response)
            return response

    def embed(method: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        with recorder.embedding(kwargs) as (op, texts):
            response = method(*args, **kwargs)
            recorder.embedding_outputs(op, texts, response)
            return response

    async def aembed(method: Callable[..., Any], args: tuple[Any, ...], kw: dict[str, Any]) -> Any:
        with recorder.embedding(kw) as (op, texts):
            response = await method(*args, **kw)
            recorder.embedding_outputs(op, texts, response)
            return response

    completions.create = _wrap(completions.create, achat if is_async else chat)
    embeddings.create = _wrap(embeddings.create, aembed if is_async else embed)
    client._memtrace_traced = True  # type: ignore[attr-defined]
    return client
