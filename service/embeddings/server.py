"""An OpenAI-compatible ``POST /v1/embeddings`` for :class:`service.embeddings.minilm.MiniLM`.

What the service's ``EndpointEmbedder`` (and any OpenAI client) sends: ``{"model": ...,
"input": str | list[str], "encoding_format": "float" | "base64"}`` (the ``openai`` package asks
for base64 unless told otherwise). The answer has OpenAI's shape: ``data`` (``object``
"embedding", ``index``, ``embedding``), ``model``, ``usage``. A request the model cannot serve
(no text, a text that is not a string, token ids, another model) is a 422 that says why, in
OpenAI's error body (``service.http_errors.openai_error``), which the ``openai`` client raises as
``UnprocessableEntityError`` with that message.
Started by ``memtrace embeddings serve``; ``GET /healthz`` answers once the model is loaded.
"""

from __future__ import annotations

import base64
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Literal

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from pydantic import BaseModel, ConfigDict, StrictStr

from service.embeddings.minilm import MiniLM
from service.errors import InvalidInput
from service.http_errors import install_error_handlers, openai_error

MAX_INPUTS = 2048
"""Most texts in one request, as OpenAI's endpoint allows."""
INPUT = [{"loc": ["body", "input"], "msg": "not a text or a list of texts"}]
NAMES = frozenset({MiniLM.name, f"sentence-transformers/{MiniLM.name}"})


def _unreadable(errors: list[Any]) -> InvalidInput:
    """Pydantic's complaints about the body as one sentence: where, and what was wanted. When
    ``input`` is a list, what its ``str`` alternative said is left out: the items are named."""
    locs = [tuple(e.get("loc", ())) for e in errors]
    listed = any("list[str]" in loc and isinstance(loc[-1], int) for loc in locs)
    parts = []
    for e in errors:
        loc = [x for x in e.get("loc", ()) if x != "body"]
        if listed and loc[-1:] == ["str"]:
            continue
        if e.get("type") == "json_invalid":
            parts.append(f"not JSON ({e.get('ctx', {}).get('error', 'unreadable')})")
            continue
        where = "".join(
            f"[{x}]" if isinstance(x, int) else f".{x}"
            for x in loc
            if x not in ("str", "list[str]")
        ).lstrip(".")
        parts.append(f"{where or 'body'}: {e.get('msg', 'invalid')}")
    # Where and what, as the service's own 422s give it; the input itself is never echoed.
    details = [{"loc": list(e.get("loc", ())), "msg": e.get("msg", "")} for e in errors]
    details.sort(key=lambda d: "input" not in d["loc"])  # OpenAI's param: input first
    return InvalidInput(
        'the body must be JSON {"model": str, "input": str | list[str]}; '
        + "; ".join(dict.fromkeys(parts)),
        details=details,
    )


class EmbeddingRequest(BaseModel):
    model_config = ConfigDict(extra="ignore")  # user, dimensions...: accepted, not used

    model: StrictStr
    input: StrictStr | list[StrictStr]
    encoding_format: Literal["float", "base64"] = "float"


def create_app() -> FastAPI:
    """The app; the model is loaded before the first request is taken."""
    lock = threading.Lock()  # one forward pass at a time: numpy already uses every core
    state: dict[str, MiniLM] = {}

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        state["model"] = MiniLM()
        yield

    app = FastAPI(title="MemTrace embeddings (all-MiniLM-L6-v2, CPU)", lifespan=lifespan)

    install_error_handlers(app, retry_after_s=1)  # unknown routes, unexpected errors

    @app.exception_handler(InvalidInput)  # in OpenAI's words, which its clients show
    async def invalid(request: Request, error: InvalidInput) -> Response:
        return openai_error(error)

    @app.exception_handler(RequestValidationError)  # one sentence: where, and what was wanted
    async def unreadable(request: Request, error: RequestValidationError) -> Response:
        return openai_error(_unreadable(list(error.errors())))

    @app.get("/healthz")
    def healthz() -> dict[str, str]:
        return {"status": "ok", "model": MiniLM.name}

    @app.get("/v1/models")
    def models() -> dict[str, Any]:
        return {"object": "list", "data": [{"id": MiniLM.name, "object": "model"}]}

    @app.post("/v1/embeddings")
    def embeddings(request: EmbeddingRequest) -> dict[str, Any]:
        # A plain def: FastAPI runs it in a worker thread, so the event loop keeps answering.
        if request.model not in NAMES:
            raise InvalidInput(
                f"unknown model {request.model!r}: this server serves {MiniLM.name!r}",
                details=[{"loc": ["body", "model"], "msg": f"not {MiniLM.name}"}],
            )
        texts = [request.input] if isinstance(request.input, str) else request.input
        if not texts:
            raise InvalidInput(
                "input is an empty list: give a text or a list of texts", details=INPUT
            )
        if len(texts) > MAX_INPUTS:
            raise InvalidInput(
                f"{len(texts)} texts in one request: at most {MAX_INPUTS}", details=INPUT
            )
        model = state["model"]
        with lock:
            vectors = model.embed(texts)
            tokens = model.count_tokens(texts)
        data = [
            {"object": "embedding", "index": i, "embedding": _encoded(v, request.encoding_format)}
            for i, v in enumerate(vectors)
        ]
        return {
            "object": "list",
            "data": data,
            "model": MiniLM.name,
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        }

    return app


def _encoded(vector: Any, encoding: str) -> list[float] | str:
    if encoding == "base64":  # little-endian float32, as OpenAI's endpoint sends it
        return base64.b64encode(vector.astype("<f4").tobytes()).decode()
    return [float(x) for x in vector]
