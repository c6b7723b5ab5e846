"""What every benchmark needs: a fresh Neo4j of its own, the service over HTTP, and a place to
write its figures. Benchmarks never touch the developer's own Neo4j instance."""

from __future__ import annotations

import json
import platform
import statistics
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from service.neo4j_local import LocalNeo4j
from service.settings import get_settings
from tests.support.servers import ServiceHandle, free_port, run_service

RESULTS = Path(__file__).resolve().parent / "results"


@contextmanager
def fresh_neo4j(
    heap: str = "3g", pagecache: str = "3g", start_s: float = 180
) -> Iterator[LocalNeo4j]:
    """A throw-away local Neo4j on a free port, stopped and deleted afterwards; ``start_s``: how
    long its start may take (minutes on a machine others load)."""
    with tempfile.TemporaryDirectory(prefix="memtrace-bench-") as home:
        local = LocalNeo4j(
            cache_dir=get_settings().local_neo4j_dir,
            home=Path(home) / "neo4j",
            port=free_port(),
            heap=heap,
            pagecache=pagecache,
        )
        local.start(start_s)
        try:
            yield local
        finally:
            local.stop()


@contextmanager
def service_on(local: LocalNeo4j, workdir: Path) -> Iterator[ServiceHandle]:
    with run_service(local.uri, workdir) as handle:
        yield handle


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (0-100) by linear interpolation."""
    ordered = sorted(values)
    if len(ordered) == 1:
        return ordered[0]
    cuts = statistics.quantiles(ordered, n=100, method="inclusive")
    return ordered[0] if q <= 0 else ordered[-1] if q >= 100 else cuts[int(q) - 1]


def save(name: str, figures: dict[str, Any]) -> Path:
    """Write ``figures`` with the machine they were measured on to results/<name>.json."""
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / f"{name}.json"
    record = {
        "measured_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": {"cpus": _cpus(), "python": platform.python_version()},
        **figures,
    }
    path.write_text(json.dumps(record, indent=2) + "\n")
    return path


def _cpus() -> int:
    import os

    return len(os.sched_getaffinity(0))
