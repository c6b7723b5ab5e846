"""A Graphiti memory traced by MemTrace (needs ``graphiti-core``, a Neo4j and an LLM server).

    OPENAI_API_KEY=... python examples/graphiti_memory.py MEMTRACE_URL NEO4J_URI [LLM_BASE_URL]

Graphiti remembers two turns of a user, Alex, and the agent answers a question from a search of
the facts that still hold, with the first fact it finds. Graphiti's LLM, embedder and reranker
are its OpenAI clients, on ``LLM_BASE_URL`` when given (any OpenAI-compatible server; the models
from ``LLM_MODEL`` and ``EMBEDDING_MODEL``); Neo4j's login from ``NEO4J_USER`` and
``NEO4J_PASSWORD``. When Graphiti's contradiction check takes the move for the end of the job
(the tests' scripted LLM does), the job's fact is retired, the answer is wrong and MemTrace
blames that invalidation: an UpdateError at ``graphiti.invalidate``. A model that keeps the job
answers right, and the case is recorded as passed.
"""

import asyncio
import os
import sys
from datetime import UTC, datetime, timedelta

from graphiti_core import Graphiti
from graphiti_core.cross_encoder.openai_reranker_client import OpenAIRerankerClient
from graphiti_core.driver.neo4j_driver import Neo4jDriver
from graphiti_core.embedder.openai import OpenAIEmbedder, OpenAIEmbedderConfig
from graphiti_core.llm_client.config import LLMConfig
from graphiti_core.llm_client.openai_generic_client import OpenAIGenericClient
from graphiti_core.search.search_filters import ComparisonOperator, DateFilter, SearchFilters
from memtrace_client import MemTraceClient
from memtrace_client.adapters.graphiti import trace_graphiti

TURNS = ["Alex: I work as a nurse at the city hospital.", "Alex: I moved to Portland last month."]
QUESTION = "What does Alex do for work?"
STILL_TRUE = SearchFilters(
    expired_at=[[DateFilter(comparison_operator=ComparisonOperator.is_null)]]
)


def graphiti_on(neo4j_uri: str, llm_base_url: str | None) -> Graphiti:
    llm = LLMConfig(
        api_key=os.environ.get("OPENAI_API_KEY"),
        model=os.environ.get("LLM_MODEL", "gpt-4.1-mini"),
        small_model=os.environ.get("LLM_MODEL", "gpt-4.1-mini"),
        base_url=llm_base_url,
    )
    embedder = OpenAIEmbedderConfig(
        api_key=os.environ.get("OPENAI_API_KEY"),
        base_url=llm_base_url,
        embedding_model=os.environ.get("EMBEDDING_MODEL", "text-embedding-3-small"),
    )
    user, password = os.environ.get("NEO4J_USER", "neo4j"), os.environ.get("NEO4J_PASSWORD", "")
    return Graphiti(
        graph_driver=Neo4jDriver(neo4j_uri, user, password),
        llm_client=OpenAIGenericClient(config=llm),
        embedder=OpenAIEmbedder(embedder),
        cross_encoder=OpenAIRerankerClient(config=llm),
    )


async def remember_and_answer(url: str, project: str, neo4j_uri: str, llm: str | None) -> str:
    graphiti = trace_graphiti(graphiti_on(neo4j_uri, llm), MemTraceClient(url, project=project))
    try:
        await graphiti.build_indices_and_constraints()
        start = datetime.now(UTC) - timedelta(days=len(TURNS))
        for day, turn in enumerate(TURNS):
            await graphiti.add_episode(
                name=f"turn-{day}",
                episode_body=turn,
                source_description="chat with Alex",
                reference_time=start + timedelta(days=day),
                group_id=project,
            )
        found = await graphiti.search(
            QUESTION, group_ids=[project], num_results=1, search_filter=STILL_TRUE
        )
    finally:
        await graphiti.close()
    answer = graphiti.answer(found[0].fact if found else "I do not know.")
    case_id = graphiti.judge(QUESTION, "nurse", answer)
    graphiti.tracer.flush()
    return case_id


def main(
    url: str, neo4j_uri: str, llm: str | None = None, project: str = "graphiti-example"
) -> str:
    """Run the agent, record the case; returns its id."""
    return asyncio.run(remember_and_answer(url, project, neo4j_uri, llm))


if __name__ == "__main__":
    if not 3 <= len(sys.argv) <= 4:
        sys.exit(__doc__.split("\n\n")[1])
    case = main(*sys.argv[1:4])
    sys.stdout.write(f"then: memtrace attribute {case} --project graphiti-example\n")
