"""The kept report counts (``service/reports/counts/repository.py``) against counting case by case.

Random writes of every kind that changes what a report counts (ingest, including answers whose
producer or time arrives in a later batch; verdicts; single attributions and a job; deletion of
a session's operations, of old data, of cases), each followed by the same report read from the
kept counts and with ``recount=true`` under several filters, compared field by field; concurrent
writers adding to one count node lose nothing; the start-up migration counts a store written
before the counts exactly as a recount does.
"""

from __future__ import annotations

import asyncio
import random
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest
from neo4j import AsyncGraphDatabase, Driver

from service.db import MIGRATIONS, apply_schema
from service.reports.counts import repository as counts
from tests.support.servers import Neo4jHandle, ServiceHandle

SYSTEMS = ("mem0", "rag", "letta")
DAYS = ("2026-05-01", "2026-05-02", "2026-05-03", "2026-05-05", "2026-05-11")
FILTERS: list[dict[str, str]] = [
    {},
    {"system": "rag"},
    {"since": "2026-05-02T00:00:00Z"},
    {"until": "2026-05-05T00:00:00Z", "bucket": "week"},
    {"since": "2026-05-02T00:00:00Z", "until": "2026-05-11T00:00:00Z", "system": "mem0"},
]


def conversation(rng: random.Random, n: int, *, answer_later: bool = False) -> dict[str, Any]:
    """One question answered from a memory, on a random day and system: a batch of its own.
    With ``answer_later`` the case names an answer unit no operation produced yet, with no
    time (``late_answer`` sends its producer and definition)."""
    day, system = rng.choice(DAYS), rng.choice(SYSTEMS)
    at = f"{day}T{rng.randrange(24):02d}:{rng.randrange(60):02d}:00Z"
    fact = f"fact {n} is {rng.choice(['red', 'blue', 'green', 'tall'])}"
    ops = [
        {
            "id": f"x{n}",
            "name": rng.choice(["extract", "extract_v2"]),
            "kind": "extraction",
            "system": system,
            "session_id": f"s{n % 4}",
            "ts": at,
            "attributes": {"prompt": rng.choice(["p1", "p2"])},
            "inputs": [f"m{n}"],
            "outputs": [
                {
                    "id": f"mem{n}",
                    "kind": "memory",
                    "content": rng.choice([fact, "something else"]),
                    "attributes": {"memory_id": f"e{n}"},
                }
            ],
        },
        {
            "id": f"r{n}",
            "name": "search",
            "kind": "retrieval",
            "system": system,
            "session_id": f"s{n % 4}",
            "ts": at,
            "inputs": [f"q{n}", f"mem{n}"],
            "outputs": [{"id": f"ctx{n}", "kind": "context", "content": f"ctx of {n}"}],
        },
    ]
    if not answer_later:
        ops.append(answer_op(n, system, at))
    return {
        "units": [
            {"id": f"m{n}", "kind": "message", "content": f"user: {fact}", "ts": at},
            {"id": f"q{n}", "kind": "query", "content": f"what is fact {n}?"},
        ],
        "operations": ops,
        "cases": [
            {
                "id": f"case-{n:03d}",
                "question": f"what is fact {n}?",
                "expected_answer": fact.split(" is ")[1],
                "answer_unit": f"a{n}",
                "verdict": rng.choice(["failed", "failed", "passed", "unknown"]),
                "evidence_units": [f"m{n}"],
            }
        ],
        "system": system,
        "at": at,
    }


def answer_op(n: int, system: str, at: str) -> dict[str, Any]:
    return {
        "id": f"ans{n}",
        "name": "answer",
        "kind": "response",
        "system": system,
        "session_id": f"s{n % 4}",
        "ts": at,
        "inputs": [f"q{n}", f"ctx{n}"],
        "outputs": [{"id": f"a{n}", "kind": "answer", "content": "I do not know", "ts": at}],
    }


def send(client: httpx.Client, project: str, conv: dict[str, Any]) -> None:
    batch = {k: conv[k] for k in ("units", "operations", "cases")}
    response = client.post("/traces", json={"project": project, **batch})
    assert response.status_code == 200, response.text


def report(client: httpx.Client, project: str, params: dict[str, str]) -> dict[str, Any]:
    response = client.get("/report", params={"project": project, **params})
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def comparable(body: dict[str, Any]) -> dict[str, Any]:
    """The report without what differs by construction: when it was made and how it counted."""
    body = {k: v for k, v in body.items() if k not in ("generated_at", "counted")}
    body["filters"] = {k: v for k, v in body["filters"].items() if k != "recount"}
    cost = body["cost"]
    # Seconds are float sums, added in another order: equal to the last few bits.
    for name in ("seconds", "mean_seconds"):
        cost[name] = pytest.approx(cost[name], rel=1e-9, abs=1e-9)
    return body


def assert_kept_equals_recount(client: httpx.Client, project: str, when: str) -> dict[str, Any]:
    """Every filter's report from the kept counts equals its recount, field by field; the
    unfiltered recount is returned."""
    whole: dict[str, Any] = {}
    for params in FILTERS:
        kept = report(client, project, params)
        recount = report(client, project, {**params, "recount": "true"})
        assert (kept["counted"], recount["counted"]) == ("kept", "cases")
        assert comparable(kept) == comparable(recount), f"{when}, filters {params}"
        whole = whole or recount
    listed = client.get("/projects", params={"project": project}).json()
    mine = [p for p in listed if p["project"] == project]
    cases = whole["totals"]["cases"]
    if cases:
        assert (mine[0]["cases"], mine[0]["failed_cases"]) == (
            cases,
            whole["totals"]["failed"],
        ), when
    return whole


def attribute(client: httpx.Client, project: str, case_ids: list[str]) -> None:
    for case_id in case_ids:
        response = client.post(
            f"/attribute/{case_id}", params={"project": project}, json={"refresh": True}
        )
        assert response.status_code == 200, response.text


def failed(client: httpx.Client, project: str) -> list[str]:
    cases = client.get(
        "/cases", params={"project": project, "verdict": "failed", "limit": 500}
    ).json()
    return sorted(c["id"] for c in cases)


def run_job(client: httpx.Client, project: str) -> None:
    job = client.post("/attribution-jobs", params={"project": project}, json={"refresh": True})
    assert job.status_code == 202, job.text
    for _ in range(600):
        state = client.get(f"/attribution-jobs/{job.json()['id']}", params={"project": project})
        if state.json()["status"] in ("completed", "failed", "stopped"):
            assert state.json()["status"] == "completed", state.text
            return
        time.sleep(0.2)
    pytest.fail("the attribution job did not finish")


def test_kept_counts_follow_every_writer(client: httpx.Client, project: str) -> None:
    rng = random.Random(34)
    convs = [conversation(rng, n, answer_later=n % 7 == 3) for n in range(28)]
    for conv in convs:
        send(client, project, conv)
    # Cases sent with their answer and no operation: no system, and only retention's case
    # deletion (not the operations') removes the old ones.
    bare = [
        {
            "id": f"bare-{k}",
            "question": "q",
            "expected_answer": "x",
            "answer_unit": f"bare-a{k}",
            "verdict": ("failed", "passed")[k % 2],
        }
        for k in range(4)
    ]
    units = [
        {"id": f"bare-a{k}", "kind": "answer", "content": "y", "ts": f"{DAYS[k % 2 * 3]}T08:00:00Z"}
        for k in range(4)
    ]
    response = client.post(
        "/traces", json={"project": project, "units": units, "operations": [], "cases": bare}
    )
    assert response.status_code == 200, response.text
    whole = assert_kept_equals_recount(client, project, "after ingest")
    assert whole["totals"]["cases"] == len(convs) + len(bare)

    # Answers whose producer and time arrive after their case: the case's system and day move.
    for n, conv in enumerate(convs):
        if n % 7 == 3:
            batch = {"units": [], "operations": [answer_op(n, conv["system"], conv["at"])]}
            response = client.post("/traces", json={"project": project, **batch, "cases": []})
            assert response.status_code == 200, response.text
    assert_kept_equals_recount(client, project, "after late answers")

    attribute(client, project, rng.sample(failed(client, project), 6))
    whole = assert_kept_equals_recount(client, project, "after single attributions")
    assert whole["totals"]["attributions"] == 6

    run_job(client, project)
    whole = assert_kept_equals_recount(client, project, "after a job")
    assert whole["totals"]["attributed"] > 0 and whole["top_prompts"]

    for case_id in rng.sample([f"case-{n:03d}" for n in range(len(convs))], 10):
        verdict = {"verdict": rng.choice(["failed", "passed", "unknown"])}
        response = client.post(
            f"/cases/{case_id}/verdict", params={"project": project}, json=verdict
        )
        assert response.status_code == 200, response.text
    assert_kept_equals_recount(client, project, "after verdicts")
    attribute(client, project, failed(client, project)[:4])
    assert_kept_equals_recount(client, project, "after attributing again")

    # The extractions of one session blamed by attributions: their deletion clears blames.
    response = client.delete("/sessions/s1", params={"project": project})
    assert response.status_code == 200 and response.json()["operations"] > 0, response.text
    assert_kept_equals_recount(client, project, "after deleting a session")

    response = client.delete("/data", params={"project": project, "before": "2026-05-02T12:00:00Z"})
    assert response.status_code == 200, response.text
    whole = assert_kept_equals_recount(client, project, "after deleting old data")
    assert 0 < whole["totals"]["cases"] < len(convs)
    assert response.json()["cases"] > 0

    response = client.delete("/project", params={"project": project, "confirm": project})
    assert response.status_code == 200, response.text
    assert report(client, project, {})["totals"]["cases"] == 0


def test_a_non_midnight_window_and_recount_are_counted_case_by_case(
    client: httpx.Client, project: str
) -> None:
    send(client, project, conversation(random.Random(1), 0))
    window = {"since": "2026-05-01T06:30:00Z"}
    assert report(client, project, window)["counted"] == "cases"
    assert report(client, project, {"recount": "true"})["counted"] == "cases"
    assert report(client, project, {"since": "2026-05-01T00:00:00+00:00"})["counted"] == "kept"


def test_concurrent_writers_lose_no_increment(
    service: ServiceHandle, project: str, neo4j_driver: Driver
) -> None:
    """Twelve batches at once, each with cases that all land in one count node."""

    def batch(i: int) -> int:
        rng = random.Random(i)
        cases = []
        units = []
        for k in range(5):
            n = i * 100 + k
            units.append(
                {"id": f"a{n}", "kind": "answer", "content": "x", "ts": "2026-05-01T10:00:00Z"}
            )
            cases.append(
                {
                    "id": f"case-{n}",
                    "question": "q",
                    "expected_answer": str(rng.random()),
                    "answer_unit": f"a{n}",
                    "verdict": "failed",
                }
            )
        body = {"project": project, "units": units, "operations": [], "cases": cases}
        with httpx.Client(base_url=service.url, timeout=120) as c:
            return c.post("/traces", json=body).status_code

    with ThreadPoolExecutor(12) as pool:
        assert set(pool.map(batch, range(12))) == {200}
    with httpx.Client(base_url=service.url, timeout=120) as c:
        totals = report(c, project, {})["totals"]
        assert totals["cases"] == totals["failed"] == 60
        assert_kept_equals_recount(c, project, "after concurrent batches")

        def flip(i: int) -> int:
            with httpx.Client(base_url=service.url, timeout=120) as cc:
                verdict = {"verdict": "passed" if i % 2 else "unknown"}
                return cc.post(
                    f"/cases/case-{(i % 12) * 100}/verdict",
                    params={"project": project},
                    json=verdict,
                ).status_code

        with ThreadPoolExecutor(12) as pool:
            assert set(pool.map(flip, range(36))) == {200}
        assert_kept_equals_recount(c, project, "after concurrent verdicts")
    records, _, _ = neo4j_driver.execute_query(
        "MATCH (n:ReportCount {project: $project}) RETURN count(n) AS nodes, sum(n.cases) AS cases",
        project=project,
    )
    assert records[0]["cases"] == 60


def test_start_up_migration_counts_an_older_store(
    client: httpx.Client, project: str, neo4j: Neo4jHandle, neo4j_driver: Driver
) -> None:
    rng = random.Random(7)
    for n in range(12):
        send(client, project, conversation(rng, n))
    attribute(client, project, failed(client, project)[:3])
    expected = comparable(report(client, project, {"recount": "true"}))
    # As a store written before the counts: no count node, no case counted.
    neo4j_driver.execute_query(
        "MATCH (n:ReportCount {project: $project}) DETACH DELETE n", project=project
    )
    neo4j_driver.execute_query(
        "MATCH (c:Case {project: $project}) REMOVE c.report_key, c.report_sums", project=project
    )
    assert report(client, project, {})["totals"]["cases"] == 0

    async def start_up() -> None:
        driver = AsyncGraphDatabase.driver(neo4j.uri, auth=(neo4j.user, neo4j.password))
        try:
            await apply_schema(driver, "neo4j")
        finally:
            await driver.close()

    assert counts.count_uncounted_cases in MIGRATIONS
    asyncio.run(start_up())
    assert comparable(report(client, project, {})) == expected
    assert_kept_equals_recount(client, project, "after the migration")
