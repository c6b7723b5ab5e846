"""The memtrace command line, run as a user runs it: a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.support.servers import REPO


def memtrace(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cli.main", *args],
        cwd=REPO,
        env={**os.environ, "COLUMNS": "200", **env},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
