"""The one start-and-wait loop (service/processes.py) the Neo4j launcher, the demo's background
service and the tests' service processes share."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from service.processes import NotReady, spawn, wait_ready


def test_a_process_that_exits_is_reported_with_its_code(tmp_path: Path) -> None:
    log = tmp_path / "out.log"
    process = spawn([sys.executable, "-c", "print('bye'); raise SystemExit(3)"], log)
    with pytest.raises(NotReady) as raised:
        wait_ready(process, lambda: False, timeout_s=60)
    assert raised.value.returncode == 3
    assert "bye" in log.read_text()


def test_a_process_never_ready_is_left_running_for_the_caller(tmp_path: Path) -> None:
    process = spawn([sys.executable, "-c", "import time; time.sleep(60)"], tmp_path / "out.log")
    try:
        with pytest.raises(NotReady) as raised:
            wait_ready(process, lambda: False, timeout_s=0.2, poll_s=0.05)
        assert raised.value.returncode is None
        assert process.poll() is None
    finally:
        process.kill()
        process.wait()


def test_ready_returns_and_env_reaches_the_process(tmp_path: Path) -> None:
    marker = tmp_path / "ready"
    code = "import os, pathlib, time; pathlib.Path(os.environ['MARK']).touch(); time.sleep(60)"
    process = spawn([sys.executable, "-c", code], tmp_path / "out.log", env={"MARK": str(marker)})
    try:
        wait_ready(process, marker.exists, timeout_s=60, poll_s=0.05)
        assert process.poll() is None
    finally:
        process.kill()
        process.wait()
