"""``memtrace serve --workers N`` as a subprocess, waited on until every worker answers."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from tests.support.servers import REPO, ServiceHandle, free_port


@contextmanager
def memtrace_serve(workers: int, workdir: Path, **env: str) -> Iterator[ServiceHandle]:
    """The service as a user starts it, with ``workers`` processes on one port; ``env`` are
    MEMTRACE_* settings (the Neo4j URI and credentials at least)."""
    port = free_port()
    log = workdir / f"serve-{port}.log"
    command = ["serve", "--port", str(port), "--workers", str(workers)]
    with open(log, "ab") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "cli.main", *command],
            cwd=REPO,
            env={**os.environ, **env},
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        # /healthz answers as soon as one worker is up: wait for every worker's start-up line.
        while log.read_text(errors="replace").count("Application startup complete") < workers:
            if process.poll() is not None:
                raise RuntimeError(f"memtrace serve exited:\n{log.read_text()[-3000:]}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"memtrace serve did not start:\n{log.read_text()[-3000:]}")
            time.sleep(0.2)
        httpx.get(f"{url}/healthz", timeout=10).raise_for_status()
        yield ServiceHandle(url, process, log)
    finally:
        process.terminate()  # uvicorn's parent stops its workers
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
