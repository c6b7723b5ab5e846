"""Where a benchmark writes its figures (``benchmarks/results/<name>.json``, with the machine they
were measured on) and the percentile every latency table uses. The processes a benchmark runs on
(a fresh Neo4j, the service, a scripted LLM server) come from ``tests.support``, which the tests
start theirs from too."""

from __future__ import annotations

import json
import os
import platform
import statistics
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (0-100) by linear interpolation."""
    ordered = sorted(values)
    if len(ordered) == 1:
        return ordered[0]
    cuts = statistics.quantiles(ordered, n=100, method="inclusive")
    return ordered[0] if q <= 0 else ordered[-1] if q >= 100 else cuts[int(q) - 1]


def cpu_seconds(pid: int) -> float:
    """CPU seconds (user + system) process ``pid`` has used so far, from ``/proc/<pid>/stat``:
    per request or per case it says where the time went, and moves less with other load on the
    machine than wall time does."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def save(name: str, figures: dict[str, Any]) -> Path:
    """Write ``figures`` with the machine they were measured on to results/<name>.json, replacing
    the previous run's: results/ holds each benchmark's latest figures only (history is in git)."""
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / f"{name}.json"
    record = {
        "measured_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": {"cpus": len(os.sched_getaffinity(0)), "python": platform.python_version()},
        **figures,
    }
    path.write_text(json.dumps(record, indent=2) + "\n")
    return path
