"""Peak memory of ``memtrace ingest`` on big JSONL files: it streams, so it should not grow with
the file. Run: ``python -m benchmarks.ingest big-file`` (default sizes 200 MB and 1 GB).

For each size a JSONL file is generated in the temporary folder (deleted afterwards): batches of
250 operations, each consuming the two units of the operation before and producing two units of
``--content-bytes`` characters (memory entries of a few KB, as an LLM memory holds: this keeps a
1 GB file at ~130k operations, which this 2-core machine stores in minutes). The CLI runs as a
subprocess against the service on a fresh Neo4j; its peak resident memory is read from
``/proc/<pid>/status`` (VmHWM, the kernel's high-water mark) while it runs.
Figures go to ``benchmarks/results/ingest_big_file.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.figures import save
from tests.support.servers import REPO, fresh_neo4j, run_service

TS = "2026-01-01T00:00:00Z"


def write_file(
    path: Path, project: str, megabytes: int, content_bytes: int, ops_per_batch: int = 250
) -> int:
    """Write batches to ``path`` until it holds ``megabytes``; returns the operations written."""
    filler = "x" * content_bytes
    target, start = megabytes * 1_000_000, 0
    with path.open("w") as out:
        while out.tell() < target:
            ops = []
            for i in range(start, start + ops_per_batch):
                ops.append(
                    {
                        "id": f"op{i}",
                        "name": "memory_system.memory_update",
                        "kind": "update",
                        "ts": TS,
                        "inputs": [f"u{i - 1}a", f"u{i - 1}b"],
                        "outputs": [
                            {"id": f"u{i}{s}", "kind": "memory", "content": f"{i}{s} {filler}"}
                            for s in "ab"
                        ],
                    }
                )
            start += ops_per_batch
            out.write(json.dumps({"project": project, "operations": ops}) + "\n")
    return start


def _peak_rss_kb(pid: int) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def ingest(path: Path, url: str) -> dict[str, Any]:
    """Run ``memtrace ingest`` on ``path``; its time and peak RSS, sampled every 0.2 s."""
    started = time.perf_counter()
    cli = subprocess.Popen(
        [sys.executable, "-m", "cli.main", "ingest", str(path), "--url", url],
        cwd=REPO,
        env={**os.environ, "COLUMNS": "300"},  # the summary on one line
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    peak = 0
    while cli.poll() is None:
        peak = max(peak, _peak_rss_kb(cli.pid) or 0)
        time.sleep(0.2)
    elapsed = time.perf_counter() - started
    out, err = cli.communicate()
    if cli.returncode != 0:
        raise RuntimeError(f"memtrace ingest failed: {err[-2000:]}")
    return {
        "seconds": round(elapsed, 1),
        "peak_rss_mb": round(peak / 1024, 1),
        "summary": out.strip().splitlines()[-1],
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--megabytes", type=int, nargs="+", default=[200, 1000])
    parser.add_argument("--content-bytes", type=int, default=4_000)
    args = parser.parse_args(argv)
    runs = []
    with (
        tempfile.TemporaryDirectory() as tmp,
        fresh_neo4j() as local,
        run_service(local.uri, Path(tmp)) as service,
    ):
        for size in args.megabytes:
            path = Path(tmp) / f"big-{size}mb.jsonl"
            operations = write_file(path, f"big{size}", size, args.content_bytes)
            file_mb = round(path.stat().st_size / 1_000_000)
            run = {"file_mb": file_mb, "operations": operations, **ingest(path, service.url)}
            run["mb_per_s"] = round(file_mb / run["seconds"], 1)
            path.unlink()
            print(run, flush=True)
            runs.append(run)
    # The sizes share one Neo4j, each in a project of its own.
    figures = {"content_bytes": args.content_bytes, "runs": runs}
    print("written to", save("ingest_big_file", figures))
