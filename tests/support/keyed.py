"""A service with API keys over three projects (two keyed ones and ``default``), each holding
the demo trace tagged with its own marker and with one attributed case: what the isolation
suites (tests/contract/test_isolation.py, tests/attribution/test_attribution_job.py) probe.

``keyed`` (tests/conftest.py) is module-scoped: each test module using it gets its own service.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from tests.support.servers import Neo4jHandle, ServiceHandle, run_service
from tests.support.traces import demo_batch

RUN = uuid.uuid4().hex[:8]
A, B = f"iso-a-{RUN}", f"iso-b-{RUN}"
DEFAULT = "default"
PROJECTS = (A, B, DEFAULT)
A_KEY = "iso-a-key-" + uuid.uuid4().hex
B_KEY = "iso-b-key-" + uuid.uuid4().hex
ADMIN_KEY = "iso-admin-" + uuid.uuid4().hex
KEYS = {"own-a": A_KEY, "admin": ADMIN_KEY}
ALLOWED = {A_KEY: {A}, B_KEY: {B}, ADMIN_KEY: set(PROJECTS)}


def marker(project: str) -> str:
    return f"MARK-{project}-{RUN}"


CASE = f"{RUN}-case-1"
_REFERENCES = ("inputs", "outputs", "evidence_units")


def tagged_batch(project: str) -> dict[str, Any]:
    """The demo trace in ``project``, ids prefixed with this run's id (``default`` outlives a
    module), the project's marker in every text it holds."""
    batch = demo_batch(project)

    def tag(item: Any) -> None:
        if isinstance(item, dict):
            for key, value in item.items():
                if key in ("content", "question") and isinstance(value, str):
                    item[key] = f"{value} {marker(project)}"
                elif key in ("id", "answer_unit") and isinstance(value, str):
                    item[key] = f"{RUN}-{value}"
                elif key in _REFERENCES and isinstance(value, list):
                    item[key] = [f"{RUN}-{v}" if isinstance(v, str) else v for v in value]
                    tag(item[key])
                else:
                    tag(value)
        elif isinstance(item, list):
            for value in item:
                tag(value)

    tag(batch)
    return batch


@contextmanager
def keyed_service(neo4j: Neo4jHandle, workdir: Path) -> Iterator[ServiceHandle]:
    """The service with API keys, its projects filled (conftest's ``keyed`` fixture)."""
    with run_service(
        neo4j.uri,
        workdir,
        MEMTRACE_NEO4J_USER=neo4j.user,
        MEMTRACE_NEO4J_PASSWORD=neo4j.password,
        MEMTRACE_API_KEYS=f"{A_KEY}:{A};{B_KEY}:{B};{ADMIN_KEY}",
    ) as handle:
        with httpx.Client(base_url=handle.url, timeout=60) as admin:
            headers = {"Authorization": f"Bearer {ADMIN_KEY}"}
            for project in PROJECTS:
                stored = admin.post("/traces", json=tagged_batch(project), headers=headers)
                assert stored.status_code == 200, stored.text
                attributed = admin.post(
                    f"/attribute/{CASE}", params={"project": project}, headers=headers
                )
                assert attributed.status_code == 200, attributed.text
        yield handle
