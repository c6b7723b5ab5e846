"""Audits and reports read under a time budget, as POST /cypher does (issue 21): past it, a 422
naming what ran too long and what narrows it; never a 500, a 503 inviting a retry, or a hang."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from neo4j import READ_ACCESS, AsyncGraphDatabase, AsyncTransaction

from service.audits.catalogue import AUDITS
from service.errors import ReadTimedOut
from service.read_budget import Deadline, read_within
from tests.support.servers import Neo4jHandle, client_of_service
from tests.support.traces import demo_batch

ENDLESS = "UNWIND range(1, 2000000000) AS x WITH x WHERE x < 0 RETURN count(x) AS n"


@pytest.fixture(scope="module")
def hurried(neo4j: Neo4jHandle, workdir: Path) -> Iterator[httpx.Client]:
    """A service whose audits and reports have a budget no read fits in."""
    with client_of_service(
        neo4j, workdir, timeout_s=60, MEMTRACE_AUDIT_TIMEOUT_S="0.000001"
    ) as client:
        yield client


def _stopped(response: httpx.Response) -> dict[str, object]:
    assert response.status_code == 422, response.text[:300]
    assert "Retry-After" not in response.headers  # the same request would time out again
    body: dict[str, object] = response.json()
    assert body["error"] == "query_failed"
    assert "time budget of 1e-06 s" in str(body["message"])
    return body


@pytest.mark.parametrize("name", sorted(AUDITS))
def test_an_audit_past_its_budget_is_a_422_naming_it(
    hurried: httpx.Client, client: httpx.Client, project: str, name: str
) -> None:
    client.post("/traces", json=demo_batch(project)).raise_for_status()
    body = _stopped(hurried.get(f"/audits/{name}", params={"project": project, "limit": 7}))
    assert f"audit {name!r}" in str(body["message"]) and "limit, now 7" in str(body["message"])
    details = body["details"]
    assert isinstance(details, list) and details[0]["loc"] == ["query", "limit"]
    narrowing = {p.name for p in AUDITS[name].info.parameters if p.choices}
    assert {d["loc"][1] for d in details[1:]} == narrowing
    # Within the default budget the same page answers.
    assert client.get(f"/audits/{name}", params={"project": project, "limit": 7}).is_success


@pytest.mark.parametrize("path", ["/report", "/report.html"])
def test_a_report_past_its_budget_is_a_422_saying_how_to_narrow_it(
    hurried: httpx.Client, client: httpx.Client, project: str, path: str
) -> None:
    client.post("/traces", json=demo_batch(project)).raise_for_status()
    body = _stopped(hurried.get(path, params={"project": project}))
    assert "the report ran longer" in str(body["message"])
    assert [d["loc"] for d in body["details"]] == [  # type: ignore[attr-defined]
        ["query", "since"],
        ["query", "until"],
        ["query", "system"],
    ]
    assert client.get(path, params={"project": project}).is_success
    assert hurried.get("/readyz").status_code == 200


def test_a_read_past_its_deadline_is_stopped(neo4j: Neo4jHandle) -> None:
    """Neo4j stops a read that runs on (its transaction timeout, checked every ~2 s), and the
    service stops waiting for one that never answers (2 s after the deadline); the session
    still serves the next read."""

    async def endless(tx: AsyncTransaction) -> object:
        return await (await tx.run(ENDLESS)).single()

    async def never_answers(tx: AsyncTransaction) -> object:
        await asyncio.sleep(3600)
        return None

    async def one(tx: AsyncTransaction) -> object:
        record = await (await tx.run("RETURN 1 AS one")).single()
        return record["one"] if record else None

    async def scenario() -> object:
        auth = (neo4j.user, neo4j.password)
        async with (
            AsyncGraphDatabase.driver(neo4j.uri, auth=auth) as driver,
            driver.session(database="neo4j", default_access_mode=READ_ACCESS) as session,
        ):
            for work in (endless, never_answers):
                with pytest.raises(ReadTimedOut):
                    await read_within(session, Deadline.starting_now(0.5), work)
            return await read_within(session, Deadline.starting_now(30), one)

    assert asyncio.run(scenario()) == 1
