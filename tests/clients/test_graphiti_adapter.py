"""The Graphiti adapter on the real ``graphiti-core`` package, end to end.

Graphiti runs unchanged on a real Neo4j: its LLM client (``OpenAIGenericClient``), embedder
(``OpenAIEmbedder``) and reranker (``OpenAIRerankerClient``) are the ones it ships, pointed at the
scripted OpenAI-compatible server, which answers each of Graphiti's structured prompts
(``/chat/completions`` with a ``json_schema`` response format) from a script
(tests/support/graphiti_llm.py) and ``/embeddings`` with bag-of-words vectors; the reranker is
never asked, since ``search`` fuses its rankings by RRF. The script makes one mistake of each
kind; the trace goes through the SDK into the running service and Neo4j, and ``POST /attribute``
must blame each wrong answer on the operation that made it.

Graphiti's store is the tests' own Neo4j, not a second one: Neo4j Community has one user
database, and Graphiti's labels (``Entity``, ``Episodic``, ``Community``, ``Saga``) and
relationship types (``RELATES_TO``, ``MENTIONS``, ...) are none of MemTrace's
(graph_schema/labels.py), whose every statement is scoped to a project and its own labels; no
fixture wipes the database, and each run writes under a ``group_id`` of its own (the test's
project). A second Neo4j would cost its start (tens of seconds on a loaded machine) for no
isolation these tests need. Graphiti's indexes stay in that database; the test that counts
indexes (tests/adhoc/test_cypher.py) compares before and after within itself.
"""

from __future__ import annotations

import asyncio
import json
import runpy
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, NamedTuple

import httpx
import pytest
from graphiti_core import Graphiti
from graphiti_core.cross_encoder.openai_reranker_client import OpenAIRerankerClient
from graphiti_core.driver.neo4j_driver import Neo4jDriver
from graphiti_core.edges import EntityEdge
from graphiti_core.embedder.openai import OpenAIEmbedder, OpenAIEmbedderConfig
from graphiti_core.llm_client.config import LLMConfig
from graphiti_core.llm_client.openai_generic_client import OpenAIGenericClient
from graphiti_core.nodes import CommunityNode
from graphiti_core.search.search_config import SearchResults
from graphiti_core.search.search_config_recipes import COMBINED_HYBRID_SEARCH_RRF
from graphiti_core.search.search_filters import ComparisonOperator, DateFilter, SearchFilters
from memtrace_client import MemTraceClient, Tracer
from memtrace_client.adapters.graphiti import (
    TracedGraphiti,
    episode_id,
    fact_line,
    trace_graphiti,
    version_id,
)
from memtrace_client.models import UnitIn
from neo4j import Driver

from tests.support.attribution import assert_attributed
from tests.support.graph import read_by, recorded_operations
from tests.support.graphiti_llm import Episode, Fact, GraphitiScript
from tests.support.llm_server import ScriptedLLM
from tests.support.servers import REPO, Neo4jHandle, ServiceHandle

DAY0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
ALEX = "Alex"
JOB_FACT = "Alex works as a nurse at the city hospital."
SHELTER = "On Saturdays Alex volunteers at the animal shelter."
MOVED = "Alex moved to Portland."
BAKERY = "Sam runs a bakery in Portland."
LOUD = "Alex finds what people do on Saturdays in Portland too loud."
CAR = "Alex drives an old red car."
BROKE = "Alex drove the old red car until it broke down."

EPISODES = [
    Episode(
        "Alex: I work as a nurse at the city hospital.",
        [ALEX, "city hospital"],
        [Fact(ALEX, "WORKS_AT", "city hospital", JOB_FACT)],
    ),
    # The sister is never extracted as a fact: an ExtractionError.
    Episode(
        "Alex: My sister Emma lives in Denver, and my favourite food is ramen.",
        [ALEX, "Emma", "Denver", "ramen"],
        [Fact(ALEX, "LIKES", "ramen", "Alex's favourite food is ramen.")],
    ),
    # Removed later by a clean-up that meant another episode: a DeletionError.
    Episode(
        "Alex: I adopted a golden retriever named Biscuit.",
        [ALEX, "Biscuit"],
        [Fact(ALEX, "ADOPTED", "Biscuit", "Alex adopted a golden retriever named Biscuit.")],
    ),
    Episode(
        "Alex: On Saturdays I volunteer at the animal shelter.",
        [ALEX, "animal shelter"],
        [Fact(ALEX, "VOLUNTEERS_AT", "animal shelter", SHELTER)],
    ),
    # The move is taken to contradict the job: Graphiti retires the job's edge, an UpdateError.
    # The cousin's bakery starts then too, but replaces nothing: not a replacement of the job.
    Episode(
        "Alex: I moved to Portland last month, where my cousin Sam runs a bakery.",
        [ALEX, "Portland", "Sam", "bakery"],
        [Fact(ALEX, "MOVED_TO", "Portland", MOVED), Fact("Sam", "RUNS", "bakery", BAKERY)],
        contradicts={MOVED: [JOB_FACT]},
    ),
    # A look-alike the search ranks above the shelter: a RetrievalError. The move said again is
    # the stored edge (Graphiti finds the same fact between the same entities).
    Episode(
        "Alex: What people do on Saturdays in Portland is too loud for me, since I moved there.",
        [ALEX, "Portland"],
        [Fact(ALEX, "DISLIKES", "Portland", LOUD), Fact(ALEX, "MOVED_TO", "Portland", MOVED)],
    ),
    Episode(
        "Alex: I drive an old red car.",
        [ALEX, "old red car"],
        [Fact(ALEX, "DRIVES", "old red car", CAR)],
    ),
    # The brother's car is taken for Alex's and ends with it: Graphiti expires Alex's car with
    # no fact that still holds in its place, a DeletionError.
    Episode(
        "Alex: My brother's old red car broke down for good yesterday.",
        [ALEX, "old red car"],
        [Fact(ALEX, "DROVE", "old red car", BROKE, ended=True)],
        contradicts={BROKE: [CAR]},
    ),
]
REMOVED = 2  # the episode the clean-up removes
COMMUNITY = ("Alex's favourite food", "Alex's favourite food is ramen, and Alex lives in Portland.")

CURRENT = SearchFilters(expired_at=[[DateFilter(comparison_operator=ComparisonOperator.is_null)]])
"""The agent's searches read the facts that still hold, as an agent answering in the present."""


def first_fact(context: str) -> str:
    """The honest answerer: the first fact it was given, without its dates."""
    lines = [line.rsplit(" (", 1)[0] for line in context.splitlines() if line.strip()]
    return lines[0] if lines else "I do not know."


def wrong_food(context: str) -> str:
    """The answerer misreading a context that names the food."""
    return "Alex's favourite food is pizza."


class Run(NamedTuple):
    episodes: list[str]  # their uuids
    answers: dict[str, UnitIn]
    found: SearchResults  # what search_ returned
    unfiltered: list[EntityEdge]  # what a search with no expired_at filter returned


class Question(NamedTuple):
    text: str
    expected: str
    episode: int  # the episode that holds the answer (the evidence the service must find)
    error_type: str
    operation: str  # the name of the operation blamed
    culprit: str  # what that operation read: the episode that made the mistake, or the question
    answerer: Callable[[str], str]


SISTER, JOB, DOG = (
    "Where does Alex's sister live?",
    "What does Alex do for work?",
    "What is the name of Alex's dog?",
)
SATURDAYS, FOOD = "What does Alex do on Saturdays?", "What is Alex's favourite food?"
DRIVES = "Which car does Alex drive?"
UNFILTERED = "Where did Alex work as a nurse?"
QUESTIONS = [
    Question(
        SISTER, "Denver", 1, "ExtractionError", "graphiti.extract", EPISODES[1].body, first_fact
    ),
    Question(JOB, "nurse", 0, "UpdateError", "graphiti.invalidate", EPISODES[4].body, first_fact),
    Question(
        DOG, "Biscuit", 2, "DeletionError", "graphiti.remove_episode", EPISODES[2].body, first_fact
    ),
    Question(
        DRIVES, "old red car", 6, "DeletionError", "graphiti.expire", EPISODES[7].body, first_fact
    ),
    Question(
        SATURDAYS,
        "volunteers at the animal shelter",
        3,
        "RetrievalError",
        "graphiti.search",
        SATURDAYS,
        first_fact,
    ),
    Question(FOOD, "ramen", 1, "ResponseError", "answer", FOOD, wrong_food),
]


def make_graphiti(neo4j: Neo4jHandle, base_url: str) -> Graphiti:
    """Graphiti with its own OpenAI clients, every one pointed at the scripted server."""
    llm = LLMConfig(api_key="test-key", model="scripted", small_model="scripted", base_url=base_url)
    return Graphiti(
        graph_driver=Neo4jDriver(neo4j.uri, neo4j.user, neo4j.password),
        llm_client=OpenAIGenericClient(config=llm),
        embedder=OpenAIEmbedder(
            OpenAIEmbedderConfig(
                api_key="test-key", base_url=base_url, embedding_model="scripted", embedding_dim=64
            )
        ),
        cross_encoder=OpenAIRerankerClient(config=llm),
    )


async def run_agent(graphiti: TracedGraphiti, group: str) -> Run:
    """Remember each episode, let a clean-up remove one, answer each question from a search of
    the current facts, then (with a community of the food saved) look the food up with the
    configurable search (``search_``), and the job with a search that keeps Graphiti's default
    (no ``expired_at`` filter)."""
    await graphiti.build_indices_and_constraints()
    episodes = []
    for i, episode in enumerate(EPISODES):
        added = await graphiti.add_episode(
            name=f"turn-{i}",
            episode_body=episode.body,
            source_description="chat with Alex",
            reference_time=DAY0 + timedelta(days=i),
            group_id=group,
        )
        episodes.append(added.episode.uuid)
    await graphiti.remove_episode(episodes[REMOVED])
    answers = {}
    for q in QUESTIONS:
        await graphiti.search(q.text, group_ids=[group], num_results=1, search_filter=CURRENT)
        answers[q.text] = graphiti.answer(q.answerer)
    # A community as Graphiti's build_communities saves one (not called: its label propagation
    # does not settle on this graph), so that search_ returns one: untraced, Graphiti's own.
    community = CommunityNode(name=COMMUNITY[0], summary=COMMUNITY[1], group_id=group)
    await community.generate_name_embedding(graphiti.embedder)
    await community.save(graphiti.driver)
    found = await graphiti.search_(FOOD, config=COMBINED_HYBRID_SEARCH_RRF, group_ids=[group])
    unfiltered = await graphiti.search(UNFILTERED, group_ids=[group], num_results=20)
    return Run(episodes, answers, found, unfiltered)


def test_graphiti_agent_traced_and_each_error_type_attributed(
    neo4j: Neo4jHandle,
    service: ServiceHandle,
    client: httpx.Client,
    project: str,
    neo4j_driver: Driver,
    llm: ScriptedLLM,
    tmp_path: Path,
) -> None:
    script = GraphitiScript(EPISODES)
    llm.script["answer"] = script  # type: ignore[attr-defined]
    tracer = Tracer(MemTraceClient(service.url, project=project), spool_dir=tmp_path)
    graphiti = trace_graphiti(make_graphiti(neo4j, llm.base_url), tracer)

    async def run() -> Run:
        try:
            return await run_agent(graphiti, project)
        finally:
            await graphiti.close()

    episodes, answers, found, unfiltered = asyncio.run(run())
    assert script.unknown == []  # every prompt Graphiti sent was one the script knows
    assert {"ExtractedEntities", "ExtractedEdges", "EdgeDuplicate"} <= set(script.asked)
    cases = {q.text: graphiti.judge(q.text, q.expected, answers[q.text]) for q in QUESTIONS}
    assert tracer.flush(60)

    recorded = recorded_operations(neo4j_driver, project)
    assert recorded[:8] == [("graphiti.extract", "extraction", 1, 1)] * 4 + [
        ("graphiti.extract", "extraction", 1, 2),  # the move and the bakery
        # the move: the episode, the job's version and the edge that replaced it -> next version
        # (not the bakery, another fact of the episode, though it starts at the same time)
        ("graphiti.invalidate", "update", 3, 1),
        ("graphiti.extract", "extraction", 1, 2),  # the look-alike, and the move's stored edge
        ("graphiti.extract", "extraction", 1, 1),
    ]
    assert recorded[8:12] == [
        ("graphiti.extract", "extraction", 1, 1),  # the brother's car, said as over
        ("graphiti.expire", "deletion", 2, 1),  # ... so expired at once: no memory of the present
        ("graphiti.expire", "deletion", 2, 1),  # the episode and Alex's car -> tombstone
        ("graphiti.remove_episode", "deletion", 1, 1),  # the dog's version -> tombstone
    ]
    assert recorded[12:-2] == [
        ("graphiti.search", "retrieval", 2, 1),
        ("answer", "response", 2, 1),
    ] * len(QUESTIONS)
    # search_: the query, each edge's version and each episode's message it returned (search_
    # filters no expired edge out either: each is the version stating its fact, see below)
    assert found.edges and found.episodes
    assert recorded[-2] == (
        "graphiti.search_",
        "retrieval",
        1 + len(found.edges) + len(found.episodes),
        1,
    )
    # Its context: the edges' facts, then the entities' and communities' summaries (which
    # Graphiti made of the facts), then the episodes' texts, each as search_ returned it.
    assert found.nodes and found.communities
    assert {n.name: n.summary for n in found.nodes}["ramen"] == "Alex's favourite food is ramen."
    assert [(c.name, c.summary) for c in found.communities] == [COMMUNITY]
    assert EPISODES[1].body in {e.content for e in found.episodes}
    assert {e.content for e in found.episodes} <= {e.body for e in EPISODES}
    assert _contexts(neo4j_driver, project, "graphiti.search_") == [
        "\n".join(
            [
                *map(fact_line, found.edges),
                *(f"{n.name}: {n.summary}" for n in found.nodes),
                *(f"{c.name}: {c.summary}" for c in found.communities),
                *(e.content for e in found.episodes),
            ]
        )
    ]
    assert {stated(e) for e in found.edges} | {episode_id(e.uuid) for e in found.episodes} < set(
        _consumed(neo4j_driver, project, "graphiti.search_")
    )
    # A search with no expired_at filter returns retired edges (the job, the car) too: each is
    # consumed as the version stating the fact the search handed on, which its context line
    # carries, and named in expired_edges; not as its retired version ("No longer true ...").
    expired = [e for e in unfiltered if e.expired_at is not None]
    assert JOB_FACT in {e.fact for e in expired}
    assert recorded[-1] == ("graphiti.search", "retrieval", 1 + len(unfiltered), 1)
    last = _last_search(neo4j_driver, project)
    assert last["expired_edges"] == [e.uuid for e in expired]
    assert last["consumed"] == {stated(e): e.fact for e in unfiltered}
    assert last["context"].splitlines() == [fact_line(e) for e in unfiltered]
    # Every unit a search or a retirement named by id (an edge's version, an episode) was defined
    # by the call that made it: the ids derived from Graphiti's state agree across calls.
    undefined = neo4j_driver.execute_query(
        "MATCH (u:Unit {project: $p}) WHERE u.defined = false RETURN count(u) AS n", p=project
    ).records[0]["n"]
    assert undefined == 0
    # Each extracted fact is a version of its edge: the edge's uuid is its memory_id.
    stored = _edges(neo4j_driver, project)
    versions = _versions(neo4j_driver, project)
    assert set(stored.values()) <= set(versions)
    removed = [texts for uuid, texts in versions.items() if uuid not in stored.values()]
    assert removed == [["Alex adopted a golden retriever named Biscuit."]]  # gone from Graphiti
    assert versions[stored[SHELTER]] == [SHELTER]
    assert versions[stored[MOVED]] == [MOVED]  # said twice, one edge, one version
    assert sorted(versions[stored[JOB_FACT]]) == [
        JOB_FACT,
        f"No longer true since {(DAY0 + timedelta(days=4)).isoformat()}; replaced by: {MOVED}",
    ]
    searched = _contexts(neo4j_driver, project)[: len(QUESTIONS)]
    contexts = dict(zip((q.text for q in QUESTIONS), searched, strict=True))
    assert contexts[SATURDAYS].startswith(LOUD)  # the look-alike won the search
    assert contexts[FOOD].startswith("Alex's favourite food is ramen.")

    for q in QUESTIONS:
        result = assert_attributed(
            client, project, cases[q.text], (q.error_type, q.operation), label=q.text
        )
        # The episode that held the answer, found by the service among the group's episodes
        # (no evidence is given: they are the source messages of the group's scope).
        assert episode_id(episodes[q.episode]) in result["evidence"], (q.text, result)
        # Not just any operation of that name: the one that made this mistake.
        assert q.culprit in read_by(neo4j_driver, project, result["operation"]["id"]), q.text


def test_graphiti_example_runs_and_its_case_is_attributed(
    neo4j: Neo4jHandle,
    service: ServiceHandle,
    client: httpx.Client,
    project: str,
    llm: ScriptedLLM,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    example = runpy.run_path(str(REPO / "examples" / "graphiti_memory.py"))
    job, move = example["TURNS"]
    llm.script["answer"] = GraphitiScript(  # type: ignore[attr-defined]
        [
            Episode(
                job, [ALEX, "city hospital"], [Fact(ALEX, "WORKS_AT", "city hospital", JOB_FACT)]
            ),
            Episode(
                move,
                [ALEX, "Portland"],
                [Fact(ALEX, "MOVED_TO", "Portland", MOVED)],
                contradicts={MOVED: [JOB_FACT]},
            ),
        ]
    )
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.setenv("NEO4J_USER", neo4j.user)
    monkeypatch.setenv("NEO4J_PASSWORD", neo4j.password)
    case_id = example["main"](service.url, neo4j.uri, llm.base_url, project)
    assert_attributed(client, project, case_id, ("UpdateError", "graphiti.invalidate"))


TEA = "Alex likes green tea."
SAID_AGAIN = Episode(
    "Alex: As I said, I work as a nurse at the city hospital. I like green tea.",
    [ALEX, "city hospital", "green tea"],
    [Fact(ALEX, "WORKS_AT", "city hospital", JOB_FACT), Fact(ALEX, "LIKES", "green tea", TEA)],
)


def test_remove_episode_keeps_the_edge_another_episode_supports(
    neo4j: Neo4jHandle,
    service: ServiceHandle,
    project: str,
    neo4j_driver: Driver,
    llm: ScriptedLLM,
    tmp_path: Path,
) -> None:
    """The job is said, then said again with the tea; removing the second episode, Graphiti
    deletes the tea (that episode's own edge) and keeps the job (the first episode's): the
    removal is the tea's deletion only, the job named among the edges kept."""
    script = GraphitiScript([EPISODES[0], SAID_AGAIN])
    llm.script["answer"] = script  # type: ignore[attr-defined]
    tracer = Tracer(MemTraceClient(service.url, project=project), spool_dir=tmp_path)
    graphiti = trace_graphiti(make_graphiti(neo4j, llm.base_url), tracer)

    async def run() -> None:
        try:
            await graphiti.build_indices_and_constraints()
            for i, episode in enumerate(script.episodes):
                added = await graphiti.add_episode(
                    name=f"turn-{i}",
                    episode_body=episode.body,
                    source_description="chat with Alex",
                    reference_time=DAY0 + timedelta(days=i),
                    group_id=project,
                )
            await graphiti.remove_episode(added.episode.uuid)
        finally:
            await graphiti.close()

    asyncio.run(run())
    assert script.unknown == []
    assert tracer.flush(60)

    assert list(_edges(neo4j_driver, project)) == [JOB_FACT]  # Graphiti kept the job only
    job = _edges(neo4j_driver, project)[JOB_FACT]
    rows = neo4j_driver.execute_query(
        "MATCH (o:Operation {project: $p, name: 'graphiti.remove_episode'}) "
        "RETURN o.attributes AS attributes, [(o)-[:CONSUMES]->(u) | u.content] AS read, "
        "[(o)-[:PRODUCES]->(t) | t.id] AS made",
        p=project,
    ).records
    assert len(rows) == 1
    removal = json.loads(rows[0]["attributes"])
    assert removal["kept_edges"] == [job]
    assert len(removal["deleted_edges"]) == 1, removal
    tea = removal["deleted_edges"][0]
    assert tea != job
    assert rows[0]["read"] == [TEA]  # the tea's version, not the job's
    assert rows[0]["made"] == [f"graphiti:{tea}:deleted"]


def stated(edge: EntityEdge) -> str:
    """The id of the version stating the edge's fact (its version before any retirement)."""
    return version_id(edge.model_copy(update={"expired_at": None}))


def _edges(driver: Driver, project: str) -> dict[str, str]:
    """Graphiti's own store: fact -> uuid of every edge of the group, removed ones excepted."""
    rows = driver.execute_query(
        "MATCH (:Entity {group_id: $g})-[e:RELATES_TO]->(:Entity) RETURN e.fact AS fact, "
        "e.uuid AS uuid",
        g=project,
    ).records
    return {r["fact"]: r["uuid"] for r in rows}


def _versions(driver: Driver, project: str) -> dict[str, list[str]]:
    """memory_id -> the texts of its memory versions, as MemTrace holds them."""
    rows = driver.execute_query(
        "MATCH (u:Unit {project: $p, kind: 'memory'}) RETURN u.content AS content, "
        "u.attributes AS attributes",
        p=project,
    ).records
    found: dict[str, list[str]] = {}
    for r in rows:
        found.setdefault(json.loads(r["attributes"])["memory_id"], []).append(r["content"])
    return found


def _consumed(driver: Driver, project: str, name: str) -> list[str]:
    """The ids of the units the operations of that name consumed."""
    rows = driver.execute_query(
        "MATCH (:Operation {project: $p, name: $name})-[:CONSUMES]->(u:Unit) RETURN u.id AS id",
        p=project,
        name=name,
    ).records
    return [r["id"] for r in rows]


def _contexts(driver: Driver, project: str, name: str = "graphiti.search") -> list[str]:
    """The context units of the searches of that name, in the order they ran."""
    rows = driver.execute_query(
        "MATCH (o:Operation {project: $p, name: $name})-[:PRODUCES]->(c:Unit) "
        "RETURN c.content AS content ORDER BY o.ts",
        p=project,
        name=name,
    ).records
    return [r["content"] for r in rows]


def _last_search(driver: Driver, project: str) -> dict[str, Any]:
    """The last ``graphiti.search``: its expired_edges, the units it consumed (id -> text, the
    query aside) and its context's text."""
    rows = driver.execute_query(
        "MATCH (o:Operation {project: $p, name: 'graphiti.search'}) WITH o ORDER BY o.ts DESC "
        "LIMIT 1 MATCH (o)-[:PRODUCES]->(c:Unit) MATCH (o)-[:CONSUMES]->(u:Unit) "
        "WHERE u.kind <> 'query' "
        "RETURN o.attributes AS attributes, c.content AS context, "
        "collect([u.id, u.content]) AS consumed",
        p=project,
    ).records
    return {
        "expired_edges": json.loads(rows[0]["attributes"])["expired_edges"],
        "consumed": dict(rows[0]["consumed"]),
        "context": rows[0]["context"],
    }
