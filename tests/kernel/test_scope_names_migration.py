"""A store written before the writer kept scope names gets them at start-up (service/db.py).

Without them an older conversation's cases would find no scope by name: its operations and
units would carry ``conversation_id`` only inside the attributes JSON, which no index reads.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import httpx
from neo4j import Driver

from tests.support.servers import Neo4jHandle, run_service


def test_a_restart_keeps_the_scope_names_of_nodes_stored_before(
    neo4j: Neo4jHandle, neo4j_driver: Driver, workdir: Path
) -> None:
    project = f"t-{uuid.uuid4().hex[:12]}"
    attributes = json.dumps({"conversation_id": "c-7", "store_id": "mem0", "user_id": ""})
    with neo4j_driver.session() as session:  # as an earlier version wrote them
        session.run(
            "CREATE (:Operation {project: $p, id: 'old-op', attributes: $a}),"
            " (:Unit {project: $p, id: 'old-unit', attributes: $a}),"
            " (:Unit {project: $p, id: 'plain', attributes: '{\"x\":1}'})",
            p=project,
            a=attributes,
        ).consume()
    with run_service(
        neo4j.uri, workdir, MEMTRACE_NEO4J_USER=neo4j.user, MEMTRACE_NEO4J_PASSWORD=neo4j.password
    ) as handle:
        assert httpx.get(f"{handle.url}/healthz").status_code == 200
    with neo4j_driver.session() as session:
        rows = session.run(
            "MATCH (n {project: $p}) RETURN n.id AS id, n.conversation_id AS c,"
            " n.store_id AS s, n.user_id AS u ORDER BY id",
            p=project,
        ).data()
    assert rows == [
        {"id": "old-op", "c": "c-7", "s": "mem0", "u": None},
        {"id": "old-unit", "c": "c-7", "s": "mem0", "u": None},
        {"id": "plain", "c": None, "s": None, "u": None},
    ]
