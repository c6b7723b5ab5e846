"""Takers polling at once each take a chunk. A take that aimed at one chunk only and lost the
compare-and-set to another taker came back empty; the process's other takers then waited idle
until its next successful take, so a job ran one chunk at a time (and a test killing Neo4j
under it found no taker holding a chunk)."""

from __future__ import annotations

import asyncio
import uuid

import httpx
from neo4j import AsyncGraphDatabase

from service.attribution.jobs import repository as jobs
from service.attribution.jobs.models import AttributionJobRequest
from service.attribution.jobs.repository import Taken
from service.attribution.jobs.runner import CHUNK, LOOK
from tests.attribution.test_attribution_job import demo_copies
from tests.support.servers import Neo4jHandle

HEAD_START_MS = 600_000
"""The job's chunks are the head start's: no other process's taker sees them meanwhile."""
JUDGE = "take-test"
"""A judge no service process runs: the generic take below is the only one to see the job."""


async def _takes(
    neo4j: Neo4jHandle, project: str, generic: bool, takers: int
) -> list[Taken | None]:
    auth = (neo4j.user, neo4j.password)
    async with AsyncGraphDatabase.driver(neo4j.uri, auth=auth) as driver:
        async with driver.session() as session:
            job = await jobs.create(
                session,
                project,
                uuid.uuid4().hex,
                AttributionJobRequest(),
                60,
                CHUNK,
                HEAD_START_MS,
            )
            if generic:  # free to every process now, for a judge only this test runs
                result = await session.run(
                    "MATCH (k:JobChunk)-[:CHUNK_OF]->(j:AttributionJob {project: $p, id: $id}) "
                    "SET j.judge = $judge, k.free_at = datetime()",
                    p=project,
                    id=job.id,
                    judge=JUDGE,
                )
                await result.consume()

        async def take(i: int) -> Taken | None:
            async with driver.session() as own:
                return await jobs.take_chunk(
                    own,
                    f"test/{i}",
                    60_000,
                    None if generic else (project, job.id),
                    LOOK,
                    (JUDGE,),
                )

        try:
            return list(await asyncio.gather(*(take(i) for i in range(takers))))
        finally:
            async with driver.session() as session:
                await jobs.stop(session, project, job.id)


def _chunks(taken: list[Taken | None]) -> list[int]:
    return sorted(t.chunk.seq for t in taken if t is not None)


def test_takers_of_a_told_job_starting_together_each_take_a_chunk(
    client: httpx.Client, neo4j: Neo4jHandle, project: str
) -> None:
    batch = demo_copies(project, 16)  # 80 failed cases: 5 chunks
    assert client.post("/traces", json=batch).status_code == 200
    taken = asyncio.run(_takes(neo4j, project, generic=False, takers=7))
    # Five chunks for seven takers: each chunk taken once, the two left over come back empty.
    assert _chunks(taken) == [0, 1, 2, 3, 4]
    assert sum(t is None for t in taken) == 2


def test_takers_of_any_job_polling_together_each_take_a_chunk(
    client: httpx.Client, neo4j: Neo4jHandle, project: str
) -> None:
    batch = demo_copies(project, 16)
    assert client.post("/traces", json=batch).status_code == 200
    taken = asyncio.run(_takes(neo4j, project, generic=True, takers=4))
    assert len(_chunks(taken)) == 4 and len(set(_chunks(taken))) == 4
    assert all(t is not None and t.chunk.project == project for t in taken)
