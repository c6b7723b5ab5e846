"""Starting a process and waiting until it is ready: one loop for the local Neo4j launcher, the
demo's background service and the tests' service processes.

Readiness is the caller's question (a Bolt or HTTP probe); the loop only stops early when the
process exits, so a crash is reported at once instead of after the whole timeout.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path


class NotReady(Exception):
    """The process exited (``returncode`` is its code) or did not become ready in time
    (``returncode`` is None; the process is left running for the caller to stop)."""

    def __init__(self, returncode: int | None) -> None:
        self.returncode = returncode
        super().__init__("exited" if returncode is not None else "not ready in time")


def spawn(
    argv: Sequence[str],
    log_path: Path,
    *,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    detach: bool = False,
) -> subprocess.Popen[bytes]:
    """``argv`` started with stdout and stderr appended to ``log_path`` and no stdin;
    ``detach`` puts it in a session of its own, so it outlives the caller (stopped by PID)."""
    with open(log_path, "ab") as log:
        return subprocess.Popen(
            list(argv),
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=dict(env) if env is not None else None,
            cwd=cwd,
            start_new_session=detach,
        )


def wait_ready(
    process: subprocess.Popen[bytes],
    ready: Callable[[], bool],
    timeout_s: float,
    poll_s: float = 0.2,
) -> None:
    """Return once ``ready()`` is true; ``NotReady`` when the process exits first or
    ``timeout_s`` passes."""
    deadline = time.monotonic() + timeout_s
    while True:
        if process.poll() is not None:
            raise NotReady(process.returncode)
        if ready():
            return
        if time.monotonic() > deadline:
            raise NotReady(None)
        time.sleep(poll_s)
