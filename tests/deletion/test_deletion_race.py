"""A deletion racing the ingestion of batches that refer to the units it deletes, on the real
Neo4j and service: every answer is a defined one (a 2xx, or a retryable 503 that names what it
is about), every batch lands whole, and the graph left behind is consistent.

Each round stores a session ``S1`` of old operations (each reads an old message and writes an old
memory); then one client deletes them (``DELETE /sessions/S1`` or ``DELETE /data?before=``) while
another keeps posting batches whose new operations read those old units by id, each batch sent
twice (the identical re-send takes the writer's lookup path). The rounds are bounded in number
and in time; no assertion is about time.
"""

from __future__ import annotations

import random
import threading
import time
from typing import Any

import httpx
import pytest
from neo4j import Driver

from tests.support.servers import ServiceHandle

ROUNDS = 8
TIME_LIMIT_S = 150.0  # stops starting rounds on a slow machine; asserts nothing
OLD, BEFORE, NEW = "2026-01-01T00:00:00Z", "2026-03-01T00:00:00Z", "2026-06-01T00:00:00Z"
OLD_OPERATIONS = 30
BATCH_TRIES = 5  # a batch answered 503 is sent again, as the SDK does


def old_session(project: str, r: int) -> dict[str, Any]:
    """Session S1 of round ``r``: ``OLD_OPERATIONS`` extractions, each from its own message."""

    def unit(uid: str, kind: str) -> dict[str, Any]:
        return {"id": uid, "kind": kind, "content": uid, "ts": OLD}

    return {
        "project": project,
        "operations": [
            {"id": f"r{r}-old{j}", "name": "extract", "kind": "extraction", "session_id": "S1",
             "ts": OLD, "inputs": [unit(f"r{r}-msg{j}", "message")],
             "outputs": [unit(f"r{r}-mem{j}", "memory")]}
            for j in range(OLD_OPERATIONS)
        ],
    }  # fmt: skip


def reading_batch(
    project: str, r: int, b: int, rng: random.Random, redefined: set[str]
) -> dict[str, Any]:
    """A new operation of session S2 that reads old units of round ``r`` by id: three memories
    and a message, the message sometimes defined again, identically (added to ``redefined``)."""
    j = rng.randrange(OLD_OPERATIONS)
    message: str | dict[str, Any] = f"r{r}-msg{j}"
    if b % 3 == 0:
        message = {"id": message, "kind": "message", "content": message, "ts": OLD}
        redefined.add(message["id"])
    memories = [f"r{r}-mem{k}" for k in rng.sample(range(OLD_OPERATIONS), 3)]
    return {
        "project": project,
        "operations": [
            {"id": f"r{r}-new{b}", "name": "search", "kind": "retrieval", "session_id": "S2",
             "ts": NEW, "inputs": [message, *memories],
             "outputs": [{"id": f"r{r}-ctx{b}", "kind": "context", "content": "c", "ts": NEW}]}
        ],
    }  # fmt: skip


def input_ids(batch: dict[str, Any]) -> list[str]:
    (op,) = batch["operations"]
    return [i if isinstance(i, str) else i["id"] for i in op["inputs"]]


def defined_answer(response: httpx.Response, named: set[str]) -> str | None:
    """What is wrong with ``response`` for the race's contract, or None: a 2xx, or a 503 with
    Retry-After whose details name only ids of ``named`` (what the request was about)."""
    if response.is_success:
        return None
    if response.status_code == 503 and response.headers.get("retry-after"):
        details = response.json().get("details") or []
        ids = {str(d["loc"][-1]) for d in details}
        if ids <= named:
            return None
    return f"{response.status_code} {response.text[:300]}"


def ingest_until_done(
    client: httpx.Client, rounds: dict[str, Any], r: int, done: threading.Event
) -> None:
    """Post reading batches, each twice, until the deletion has answered (and at least a few)."""
    rng = random.Random(r)
    b = 0
    while not done.is_set() or b < 6:
        batch = reading_batch(rounds["project"], r, b, rng, rounds["redefined"])
        for _send in range(2):
            for _try in range(BATCH_TRIES):
                response = client.post("/traces", json=batch)
                if problem := defined_answer(response, set(input_ids(batch))):
                    rounds["problems"].append(f"round {r} POST /traces: {problem}")
                if response.status_code == 200:
                    lost_named(response, batch, rounds)
                if response.status_code != 503:
                    break
            rounds["sent"][f"r{r}-new{b}"] = (batch, response.status_code)
        b += 1


def lost_named(response: httpx.Response, batch: dict[str, Any], rounds: dict[str, Any]) -> None:
    """A batch written again after the deletion removed units it reads warns with their ids:
    they must be ids it reads."""
    for warning in response.json()["warnings"]:
        named = set(warning.rsplit(": ", 1)[-1].split(", "))
        if not named <= set(input_ids(batch)):
            rounds["problems"].append(f"{input_ids(batch)} warned about {warning}")


def delete(client: httpx.Client, shape: str, project: str) -> httpx.Response:
    if shape == "session":
        return client.delete("/sessions/S1", params={"project": project})
    return client.delete("/data", params={"project": project, "before": BEFORE})


def old_units_kept(driver: Driver, project: str, r: int) -> set[str]:
    """The old units of round ``r`` still stored with their content."""
    rows = driver.execute_query(
        "MATCH (u:Unit {project: $p}) WHERE u.id STARTS WITH $prefix AND u.defined "
        "AND (u.id CONTAINS '-msg' OR u.id CONTAINS '-mem') RETURN u.id AS id",
        p=project,
        prefix=f"r{r}-",
    ).records
    return {row["id"] for row in rows}


def units_gone(kept: set[str], redefined: set[str]) -> range:
    """How many old units of a round the deletion removed, given those ``kept`` with content:
    the rest, and perhaps some of the ``redefined`` ones (a batch defining one again after the
    deletion took it stores it anew)."""
    gone = 2 * OLD_OPERATIONS - len(kept)
    return range(gone, gone + len(kept & redefined) + 1)


def operation_inputs(driver: Driver, project: str) -> dict[str, list[str]]:
    rows = driver.execute_query(
        "MATCH (o:Operation {project: $p}) "
        "RETURN o.id AS id, COLLECT { MATCH (o)-[c:CONSUMES]->(u:Unit) RETURN u.id "
        "ORDER BY c.position } AS inputs",
        p=project,
    ).records
    return {row["id"]: row["inputs"] for row in rows}


def orphans(driver: Driver, project: str) -> list[str]:
    rows = driver.execute_query(
        "MATCH (n {project: $p}) WHERE NOT EXISTS { (n)--() } RETURN n.id AS id", p=project
    ).records
    return [row["id"] for row in rows]


def graph_problems(
    driver: Driver, project: str, sent: dict[str, tuple[dict[str, Any], int]]
) -> list[str]:
    """What is inconsistent in the graph left behind: a batch that did not land, an operation
    missing an input it was sent with (a link dropped), an old operation left, an orphan."""
    stored = operation_inputs(driver, project)
    problems = [
        f"{op_id}: answered {status}, stored with inputs {stored.get(op_id)}"
        for op_id, (batch, status) in sent.items()
        if status != 200 or stored.get(op_id) != input_ids(batch)
    ]
    problems += [f"{op_id} not deleted" for op_id in stored if "-old" in op_id]
    problems += [f"orphan {unit_id}" for unit_id in orphans(driver, project)]
    return problems


@pytest.mark.parametrize("shape", ["session", "before"])
def test_a_deletion_racing_batches_that_read_its_units_answers_and_keeps_the_graph_whole(
    service: ServiceHandle, neo4j_driver: Driver, project: str, shape: str
) -> None:
    rounds: dict[str, Any] = {"project": project, "problems": [], "sent": {}, "redefined": set()}
    deadline = time.monotonic() + TIME_LIMIT_S
    with (
        httpx.Client(base_url=service.url, timeout=120) as deleter,
        httpx.Client(base_url=service.url, timeout=120) as writer,
    ):
        played = 0
        while played < ROUNDS and time.monotonic() < deadline:
            r = played
            assert writer.post("/traces", json=old_session(project, r)).status_code == 200
            done = threading.Event()
            ingester = threading.Thread(target=ingest_until_done, args=(writer, rounds, r, done))
            ingester.start()
            answers = [delete(deleter, shape, project)]
            while answers[-1].status_code == 503 and len(answers) < BATCH_TRIES:
                answers.append(delete(deleter, shape, project))  # idempotent: finish it
            done.set()
            ingester.join()
            for answer in answers:
                if problem := defined_answer(answer, set()):
                    rounds["problems"].append(f"round {r} DELETE ({shape}): {problem}")
            if len(answers) == 1 and answers[0].status_code == 200:
                # The counts are what went: every old operation, and the old units no new
                # operation took (those it read after they went are stored by id only).
                counts = answers[0].json()
                gone = units_gone(old_units_kept(neo4j_driver, project, r), rounds["redefined"])
                if counts["operations"] != OLD_OPERATIONS or counts["units"] not in gone:
                    rounds["problems"].append(f"round {r}: counted {counts}, units gone {gone}")
            played += 1
            if rounds["problems"]:
                break  # what follows would only repeat it

    problems = rounds["problems"] + graph_problems(neo4j_driver, project, rounds["sent"])
    assert not problems, "\n".join(problems)
    assert played >= 2  # the race ran more than once (rounds are bounded in time)
