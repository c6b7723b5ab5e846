"""A job's chunk reads its cases' ancestry and their evidence's descent once and gives each case
its part (``service/attribution/shared_graph.py``): each case gets the nodes its own read gives,
within the same node limit, and the job's results are the per-request ones."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import httpx
from neo4j import AsyncGraphDatabase, AsyncSession

from service.attribution import repository as attributions
from service.attribution.graph import NodeRead
from service.attribution.row_cache import RowCache
from service.attribution.shared_graph import Region
from tests.attribution.test_attribution_reads import _job_results
from tests.attribution.test_attribution_rows import whole_store
from tests.attribution.test_attribution_scope import _send
from tests.support.attribution import stable_results
from tests.support.servers import Neo4jHandle

T = TypeVar("T")
CASES = [f"{p}case{n}" for p in ("a-", "b-") for n in (1, 2, 3)]


def _with_session(neo4j: Neo4jHandle, work: Callable[[AsyncSession], Awaitable[T]]) -> T:
    async def go() -> T:
        auth = (neo4j.user, neo4j.password)
        async with (
            AsyncGraphDatabase.driver(neo4j.uri, auth=auth) as driver,
            driver.session() as session,
        ):
            return await work(session)

    return asyncio.run(go())


def _nodes(reads: list[NodeRead]) -> list[tuple[bool, str]]:
    """The nodes of some reads (a case's come in its chunk's order, not its own read's)."""
    return sorted((r.node.is_operation, r.node.id) for r in reads)


def _chunk_and_own(
    neo4j: Neo4jHandle, project: str, limit: int
) -> tuple[attributions.ChunkInputs, dict[str, attributions.CaseInputs]]:
    async def work(session: AsyncSession) -> Any:
        chunk = await attributions.chunk_graphs(session, project, CASES, limit, RowCache())
        own = await attributions.case_graphs(session, project, CASES, limit)
        return chunk, own

    chunk, own = _with_session(neo4j, work)
    return chunk, own


def test_each_case_of_a_chunk_gets_the_nodes_of_its_own_read(
    client: httpx.Client, neo4j: Neo4jHandle, project: str
) -> None:
    # two conversations in one project, every retrieval consuming the whole store
    _send(client, project, whole_store("a-"), whole_store("b-"))
    chunk, own = _chunk_and_own(neo4j, project, 10_000)
    for case in CASES:
        assert _nodes(chunk.cases[case].ancestors) == _nodes(own[case].ancestors)
        assert _nodes(chunk.cases[case].derived) == _nodes(own[case].derived)
    assert own["a-case2"].derived  # the case names its evidence: its descent was read
    # the conversations do not leak into each other's cases
    assert all(r.node.id.startswith("a-") for r in chunk.cases["a-case1"].ancestors)
    # the chunk's descent answers what a walk asks later, as a read of it would
    asked = ["a-m1", "a-m2"]
    held, read = _with_session(
        neo4j,
        lambda s: _descendants_both_ways(s, project, asked, 10_000, chunk.descent),
    )
    assert read and _nodes(held) == _nodes(read)


async def _descendants_both_ways(
    session: AsyncSession, project: str, unit_ids: list[str], limit: int, descent: Region
) -> tuple[list[NodeRead], list[NodeRead]]:
    shared = await attributions.shared_descendants(
        session, project, unit_ids, limit, RowCache(), descent
    )
    return shared, await attributions.descendants(session, project, unit_ids, limit)


def test_a_chunk_over_the_node_limit_reads_each_case_on_its_own(
    client: httpx.Client, neo4j: Neo4jHandle, project: str
) -> None:
    _send(client, project, whole_store("a-"), whole_store("b-"))
    _, unbounded = _chunk_and_own(neo4j, project, 10_000)
    sizes = [len(unbounded[c].ancestors) for c in CASES]
    union = len({(r.node.is_operation, r.node.id) for c in CASES for r in unbounded[c].ancestors})
    # a limit every case's ancestry fits in, and the chunk's together do not
    limit = max(sizes)
    assert union > limit
    chunk, own = _chunk_and_own(neo4j, project, limit)
    for case in CASES:
        assert _nodes(chunk.cases[case].ancestors) == _nodes(own[case].ancestors)
        assert _nodes(own[case].ancestors) == _nodes(unbounded[case].ancestors)
    # a descent the chunk holds that is over the limit is read as one case reads it: cut there
    descent = chunk.descent
    asked = ["a-m4"]
    _with_session(neo4j, lambda s: _descendants_both_ways(s, project, asked, 10_000, descent))
    whole = descent.reach(asked)
    small = len(whole) - 2
    held, read = _with_session(
        neo4j, lambda s: _descendants_both_ways(s, project, asked, small, descent)
    )
    assert len(read) == small
    assert [r.node.id for r in held] == [r.node.id for r in read]


def test_a_job_on_several_whole_store_conversations_gets_the_per_request_results(
    client: httpx.Client, project: str
) -> None:
    # three conversations, their cases in one chunk: each case's part of the shared reads
    _send(client, project, whole_store("a-"), whole_store("b-"), whole_store("c-"))
    cases = [*CASES, *(f"c-case{n}" for n in (1, 2, 3))]
    by_job = _job_results(client, project)
    one_by_one = dict(zip(cases, stable_results(client, project, cases), strict=True))
    assert sorted(by_job) == sorted(cases)
    for case in cases:
        assert by_job[case] == one_by_one[case], case
    assert {r["status"] for r in by_job.values()} - {"inconclusive"}
