"""``memtrace ingest`` of a JSONL file: streamed from a byte offset, and resumed after a kill
without re-sending what the service acknowledged."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from neo4j import Driver

from cli.batch_files import jsonl_from
from cli.ingest_state import state_path
from tests.support.cli import memtrace
from tests.support.servers import REPO, ServiceHandle
from tests.support.traces import chain_batch

BATCHES, OPS = 150, 10


def _write_jsonl(path: Path, project: str) -> None:
    with path.open("w") as out:
        for i in range(BATCHES):
            out.write(json.dumps(chain_batch(project, OPS, prefix=f"b{i}-")) + "\n")
            if i % 50 == 0:
                out.write("\n")  # blank lines are skipped, and still counted as lines


def test_reading_from_an_offset_gives_the_remaining_lines(tmp_path: Path) -> None:
    path = tmp_path / "b.jsonl"
    _write_jsonl(path, "p")
    every = list(jsonl_from(path))
    assert len(every) == BATCHES
    middle = every[40]
    rest = list(jsonl_from(path, middle.end_offset, middle.line))
    assert [r.batch for r in rest] == [r.batch for r in every[41:]]
    assert [r.line for r in rest] == [r.line for r in every[41:]]


def test_killed_ingest_resumes_and_stores_everything_once(
    service: ServiceHandle, project: str, tmp_path: Path, neo4j_driver: Driver
) -> None:
    path = tmp_path / "big.jsonl"
    _write_jsonl(path, project)
    state = state_path(path)
    cli = subprocess.Popen(
        [sys.executable, "-m", "cli.main", "ingest", str(path), "--url", service.url],
        cwd=REPO,
        env={**os.environ, "COLUMNS": "200"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 120
        while not (state.exists() and json.loads(state.read_text() or "{}").get("batches", 0) >= 3):
            assert cli.poll() is None, "the ingest ended before it could be interrupted"
            assert time.monotonic() < deadline, "no progress saved in 120 s"
            time.sleep(0.01)
        cli.kill()  # SIGKILL: no clean-up runs, as when a machine goes down
    finally:
        cli.wait(timeout=30)
    stopped = json.loads(state.read_text())
    assert 3 <= stopped["batches"] < BATCHES

    again = memtrace("ingest", str(path), "--url", service.url)

    assert again.returncode == 0, again.stderr
    assert f"going on after line {stopped['line']}" in again.stderr
    assert f"{BATCHES} batch(es)" in again.stdout
    # At most the one batch in flight at the kill is sent again (and stores nothing twice).
    existing = json.loads(again.stdout.split("already there ")[1].replace("'", '"'))
    assert existing["operations"] <= OPS
    assert not state.exists()
    counts, _, _ = neo4j_driver.execute_query(
        "MATCH (n {project: $project}) WITH labels(n)[0] AS label, n.id AS id "
        "WITH label, id, count(*) AS copies "
        "RETURN label, count(id) AS ids, max(copies) AS most",
        project=project,
        database_="neo4j",
    )
    by_label = {row["label"]: (row["ids"], row["most"]) for row in counts}
    assert by_label == {"Operation": (BATCHES * OPS, 1), "Unit": (BATCHES * (OPS + 1), 1)}


def test_a_changed_file_starts_from_the_beginning(
    service: ServiceHandle, project: str, tmp_path: Path
) -> None:
    path = tmp_path / "small.jsonl"
    path.write_text(json.dumps(chain_batch(project, 2, prefix="x-")) + "\n")
    state_path(path).write_text(json.dumps({"source": {"file": "elsewhere"}, "offset": 999}))
    done = memtrace("ingest", str(path), "--url", service.url)
    assert done.returncode == 0, done.stderr
    assert "starting from the beginning" in done.stderr
    assert "'operations': 2" in done.stdout
