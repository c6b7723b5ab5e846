"""``memtrace embeddings serve``: all-MiniLM-L6-v2 on the CPU behind an OpenAI-compatible
``/v1/embeddings`` (``service.embeddings``), for ``MEMTRACE_EMBEDDINGS_BASE_URL`` where no other
endpoint is at hand. Needs the ``embeddings`` extra and the model package (docs/attribution.md).
"""

from __future__ import annotations

import os
import sys
from typing import Annotated

import typer

embeddings_app = typer.Typer(
    help="A local embedding model (all-MiniLM-L6-v2, CPU) for the evidence search.",
    no_args_is_help=True,
)

THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


@embeddings_app.command("serve")
def serve(
    host: Annotated[str, typer.Option(help="Bind address.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port.")] = 8081,
    threads: Annotated[
        int, typer.Option(min=1, help="BLAS threads of the forward pass (OPENBLAS_NUM_THREADS).")
    ] = 1,
) -> None:
    """Serve POST /v1/embeddings; point MEMTRACE_EMBEDDINGS_BASE_URL at http://HOST:PORT/v1 and
    set MEMTRACE_EMBEDDINGS_MODEL=all-MiniLM-L6-v2.

    The server replaces this process (uvicorn, with the thread variables set before numpy loads;
    a variable already set in the environment wins). One thread is the default: the model's
    matrices are small, and on a 2-core machine others were loading, 64 texts took 1.3 s with one
    BLAS thread and 14-27 s with two (OpenBLAS's threads waiting on each other)."""
    env = dict(os.environ)
    for variable in THREAD_VARIABLES:
        env.setdefault(variable, str(threads))
    argv = [sys.executable, "-m", "uvicorn", "service.embeddings.server:create_app", "--factory"]
    argv += ["--host", host, "--port", str(port), "--log-level", "info"]
    os.execve(sys.executable, argv, env)


def register(app: typer.Typer) -> None:
    app.add_typer(embeddings_app, name="embeddings")
