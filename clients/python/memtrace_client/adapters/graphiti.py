"""Trace a Graphiti knowledge graph (package ``graphiti-core``): wrap a ``Graphiti``, keep its
behaviour.

    from memtrace_client.adapters.graphiti import trace_graphiti
    graphiti = trace_graphiti(Graphiti(uri, user, password), MemTraceClient(url, project="p"))
    await graphiti.add_episode(name=..., episode_body=turn, reference_time=..., group_id=user)
    edges = await graphiti.search(question, group_ids=[user], search_filter=CURRENT)

where ``CURRENT = SearchFilters(expired_at=[[DateFilter(comparison_operator=ComparisonOperator.
is_null)]])`` (``graphiti_core.search.search_filters``): the facts that still hold. Graphiti's
``search`` and ``search_`` apply no ``expired_at`` filter by default and return retired edges
too, next to the facts that replaced them; an agent answering in the present wants the filter,
and with it the attribution can blame the retirement of a fact the answer needed (see below).

Every call reaches the wrapped ``Graphiti`` unchanged and returns what it returned; anything not
named below (``add_episode_bulk``, ``add_triplet``, ``build_communities``, ...) is the wrapped
instance's own and is not recorded. Recorded:

- ``add_episode``: the episode is ingested as a ``message`` unit (``graphiti:episode:<uuid>``,
  ``episode_id(uuid)``), read by ``graphiti.extract`` (extraction), which produces one
  ``memory`` unit per edge (fact) the episode resolved to, ``memory_id`` the edge's uuid: the
  new edges, and the stored edges the LLM judged duplicates of an extracted one (Graphiti adds
  the episode to those). Which is which is read from the edge's ``episodes`` (the episode is
  the first of a new edge's, and is appended to a merged one's) and its ``created_at``; an
  invalidation candidate Graphiti hands back among the edges is neither. No operation produces
  the message: the attribution takes its evidence from source messages, which no operation made
  (graph_schema/rules.py), and an ``ingest`` operation reading it would be a second step that
  could be blamed for a fact the extraction lost. The entities are named in the extraction's
  attributes, not made units: an entity's summary repeats its edges' facts, and a second carrier
  of each fact would hide every loss of the edge itself. The group is the operations'
  ``session_id`` (the attribution's scope);
- an edge that expired during the call (Graphiti set its ``expired_at``: a stored edge the
  episode contradicts, or a new one extracted with an end date): ``graphiti.invalidate``
  (update) when an edge of the episode that still holds starts where it ends (its ``valid_at``
  is the expired edge's ``invalid_at``, which is how Graphiti dates a contradiction) from the
  same entity (a heuristic: Graphiti does not say which edge invalidated which; see
  ``_replacing``), consuming the episode, the edge's version and the replacing edges, and
  producing the edge's next version; with nothing in its place, ``graphiti.expire`` (deletion)
  producing its tombstone. A new edge is first the extraction's output, then expired: a fact
  said as already over ("until it broke down") leaves no live memory of the present;
- ``remove_episode``: ``graphiti.remove_episode`` (deletion), a tombstone for each edge that was
  gone afterwards (Graphiti keeps an edge another episode also supports);
- ``search``: ``graphiti.search`` (retrieval), consuming the query and the current version of
  each edge returned, producing one context of those edges, each with its validity as Graphiti
  presents facts to an LLM (``fact (valid_at - invalid_at|present)``). An expired edge a search
  returned (no ``expired_at`` filter) is consumed as the version that states its fact, the one
  before its retirement, and named in the ``expired_edges`` attribute: that fact is what the
  search gave the answerer, and the context line carries it; consuming the retired version
  (``No longer true since ...``) would have the context hold a fact no input held. As in the
  LangGraph adapter a search consumes what it returned, not the whole graph: a fact the graph
  held but the search missed is still found, since the attribution follows each fact to
  question time;
- ``search_`` (the configurable search): ``graphiti.search_`` (retrieval), the same, with the
  episodes it returned consumed too, and the entities' and communities' summaries in the context
  (entities and communities are not units: see above).

Why wrap the calls and read their results, not Graphiti's LLM client or its OpenTelemetry
``tracer``: the results are what Graphiti stored (the uuids, the facts after de-duplication,
the dates it set), while an LLM response is only what Graphiti was told before resolving it, and
its spans carry counts and durations, no facts. What the results do not say is read from the
call: which edges it made (``created_at`` after the call began), which it retired (``expired_at``
after the call began). Graphiti's clock and this one are the same process's. Run one
``add_episode`` per group at a time, as Graphiti itself asks: an edge another call retired while
this one ran would be taken for one this call retired.

A version of an edge is named by the edge and its state, with no time: ``graphiti:<uuid>:<hash
of the fact>``, and ``...:ended`` once the edge expired, so a later ``search`` (even in another
process) names the unit the extraction made. A retired edge's version holds what the edge still
says about the present, that it was replaced (``No longer true since <date>; replaced by:
<facts>``), with the old fact, its dates and the replacements in its attributes; its old fact
is not in its text, because the entry no longer asserts it (a search for current facts, with
the ``expired_at`` filter, does not return it), and a judge reading the old text would take the
retired version for a carrier. So the attribution reasons about what the graph holds as true
now: a question about the past ("what did Alex do before the move?") whose fact was rightly
retired is blamed on the retirement.

``answer(...)`` records the answering step over the searches since the last answer and
``judge(...)`` the case, for ``POST /attribute/{case_id}``. Searches waiting for an answer are
kept on the instance, or, for questions asked at once on one instance, in each question's
``with graphiti.answering():`` block (``memtrace_client.adapters.answering``).
"""

from __future__ import annotations

import inspect
from datetime import UTC, datetime
from typing import Any

from graphiti_core.edges import EntityEdge
from graphiti_core.errors import NodeNotFoundError
from graphiti_core.graphiti import AddEpisodeResults, Graphiti
from graphiti_core.nodes import EpisodicNode
from graphiti_core.search.search_config import SearchResults

from memtrace_client.adapters.answering import (
    AnswersRetrievals,
    PendingRetrievals,
    as_tracer,
    digest,
    package_version,
)
from memtrace_client.adapters.answering import Retrieval as Retrieval  # public, as before
from memtrace_client.client import MemTraceClient
from memtrace_client.models import UnitIn
from memtrace_client.tracer import Tracer, UnitLike

SYSTEM = "graphiti"


def _aware(value: datetime) -> datetime:
    """A time Graphiti stored, as an aware one (a driver may give naive UTC times back)."""
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value


def _since(value: datetime | None, started: datetime) -> bool:
    """Whether ``value`` (a time Graphiti set) is at or after ``started``."""
    return value is not None and _aware(value) >= started


def _when(value: datetime | None) -> str | None:
    return _aware(value).astimezone(UTC).isoformat() if value is not None else None


def graphiti_version() -> str:
    return package_version("graphiti-core")


def episode_id(episode_uuid: str) -> str:
    """The unit id of an episode's message (to name a case's evidence by)."""
    return f"graphiti:episode:{episode_uuid}"


def version_id(edge: EntityEdge) -> str:
    """The unit id of the edge's current version (see the module doc)."""
    base = f"graphiti:{edge.uuid}:{digest(edge.fact)}"
    return f"{base}:ended" if edge.expired_at is not None else base


def fact_line(edge: EntityEdge) -> str:
    """An edge as a context line: the fact and its validity, as Graphiti shows facts to an LLM."""
    valid = _when(edge.valid_at) or "date unknown"
    return f"{edge.fact} ({valid} - {_when(edge.invalid_at) or 'present'})"


def _first(edge: EntityEdge, episode: EpisodicNode) -> bool:
    """Whether ``episode`` is the first of the edge's episodes: the one it was extracted from,
    not one that found it already stored (made by a concurrent ``add_episode``, say)."""
    return edge.episodes[:1] == [episode.uuid]


def _replacing(retired: EntityEdge, holding: list[EntityEdge]) -> list[EntityEdge]:
    """The edges of the episode taken to replace ``retired``: a heuristic, since ``add_episode``
    does not say which edge invalidated which (Graphiti's ``invalidated_by`` stays inside it).
    Graphiti dates a contradiction by the new fact (the retired edge ends where the new one
    starts), and a contradiction is between two statements about one subject: the edges of the
    episode that start then from the retired edge's source entity. Of those, the ones with its
    target or its relation, if any. Another fact of the episode, about someone or something
    else, replaces nothing, though it starts at the same time (every fact of an episode does)."""
    if retired.invalid_at is None:
        return []
    ends = _aware(retired.invalid_at)
    starting = [
        e
        for e in holding
        if e.source_node_uuid == retired.source_node_uuid
        and e.valid_at is not None
        and _aware(e.valid_at) == ends
    ]
    closer = [
        e
        for e in starting
        if e.target_node_uuid == retired.target_node_uuid or e.name == retired.name
    ]
    return closer or starting


def _live(edge: EntityEdge) -> EntityEdge:
    """The edge as it was before it expired (its version before retirement)."""
    return edge.model_copy(update={"expired_at": None}) if edge.expired_at else edge


class TracedGraphiti(AnswersRetrievals):
    """A ``Graphiti`` whose ``add_episode``, ``remove_episode``, ``search`` and ``search_`` are
    traced; every other attribute is the wrapped instance's own. ``answer`` and ``judge``:
    :class:`~memtrace_client.adapters.answering.AnswersRetrievals`."""

    system = SYSTEM

    def __init__(self, graphiti: Graphiti, tracer: Tracer) -> None:
        self.graphiti = graphiti
        self.tracer = tracer
        self.version = graphiti_version()
        self._pending = PendingRetrievals(f"memtrace_graphiti_pending_{id(self)}")

    def __getattr__(self, name: str) -> Any:
        if name == "graphiti":  # not set yet (during __init__): no recursion into itself
            raise AttributeError(name)
        return getattr(self.graphiti, name)

    def _common(self) -> dict[str, Any]:
        return {"system": SYSTEM, "graphiti_version": self.version}

    # -- units -----------------------------------------------------------------------------------

    def _episode(self, episode: EpisodicNode, body: str) -> UnitIn:
        """The episode as a source message, timed by its reference time unless that is ahead."""
        now = datetime.now(UTC)
        said = _aware(episode.valid_at) if episode.valid_at is not None else None
        ts = said if said is not None and said <= now else now
        return self.tracer.message(
            body,
            id=episode_id(episode.uuid),
            ts=ts,
            episode_uuid=episode.uuid,
            episode_name=episode.name,
            source=episode.source.value,
            source_description=episode.source_description,
            group_id=episode.group_id,
        )

    def _version(self, edge: EntityEdge, content: str | None = None, **attributes: Any) -> UnitIn:
        """Record the edge's current version (a definition that every place makes alike)."""
        return self.tracer.memory(
            edge.fact if content is None else content,
            id=version_id(edge),
            stamp=False,
            memory_id=edge.uuid,
            relation=edge.name,
            source_node_uuid=edge.source_node_uuid,
            target_node_uuid=edge.target_node_uuid,
            **attributes,
        )

    def _returned(self, edge: EntityEdge) -> UnitIn:
        """The version of an edge a search returned: the one stating its fact, which is what the
        search handed on, also when the edge had expired (the version before its retirement)."""
        return self._version(_live(edge))

    def _current(self, edge: EntityEdge) -> UnitLike:
        """The edge's current version: defined when live; named only when expired, since its
        text (what replaced it) was recorded by the call that retired it."""
        return self._version(edge) if edge.expired_at is None else version_id(edge)

    # -- add_episode -----------------------------------------------------------------------------

    async def add_episode(self, *args: Any, **kwargs: Any) -> AddEpisodeResults:
        """``Graphiti.add_episode`` unchanged, recorded as described in the module doc."""
        bound = inspect.signature(Graphiti.add_episode).bind(self.graphiti, *args, **kwargs)
        body = str(bound.arguments.get("episode_body", ""))
        started = datetime.now(UTC)
        results = await self.graphiti.add_episode(*args, **kwargs)
        # With ``uuid=`` Graphiti reprocesses the stored episode and ignores ``episode_body``:
        # the text it read is the episode's content.
        self._record_episode(results, results.episode.content or body, started)
        return results

    def _record_episode(self, results: AddEpisodeResults, body: str, started: datetime) -> None:
        episode = results.episode
        message = self._episode(episode, body)
        # results.edges is the resolved edges (each with this episode in its ``episodes``: Graphiti
        # appends it) and the invalidation candidates (never given the episode, and keeping an
        # older expired_at when already expired): only the former are the extraction's output.
        resolved = [e for e in results.edges if episode.uuid in e.episodes]
        made = [e for e in resolved if _since(e.created_at, started) and _first(e, episode)]
        ended = [e for e in results.edges if _since(e.expired_at, started)]
        gone = {e.uuid for e in made + ended}
        merged = [e for e in resolved if e.uuid not in gone]
        common = {**self._common(), "session_id": episode.group_id, "episode_uuid": episode.uuid}
        self.tracer.record_operation(
            "graphiti.extract",
            kind="extraction",
            inputs=[message],
            outputs=[*(self._version(_live(e)) for e in made), *map(self._current, merged)],
            ts=started,
            entities=sorted({n.name for n in results.nodes}),
            new_edges=[e.uuid for e in made],
            merged_edges=[e.uuid for e in merged],
            **common,
        )
        holding = [e for e in made + merged if e.expired_at is None]
        for edge in ended:
            self._record_retired(edge, message, holding, common)

    def _record_retired(
        self, edge: EntityEdge, message: UnitIn, holding: list[EntityEdge], common: dict[str, Any]
    ) -> None:
        before = self._version(_live(edge))
        replacing = _replacing(edge, holding)
        dates: dict[str, Any] = {
            "valid_at": _when(edge.valid_at),
            "invalid_at": _when(edge.invalid_at),
            "expired_at": _when(edge.expired_at),
        }
        if not replacing:
            tombstone = self.tracer.tombstone(edge.uuid, id=version_id(edge), stamp=False)
            self.tracer.record_operation(
                "graphiti.expire",
                kind="deletion",
                inputs=[message, before],
                outputs=[tombstone],
                memory_id=edge.uuid,
                **dates,
                **common,
            )
            return
        since = _when(edge.invalid_at) or "date unknown"
        facts = "; ".join(e.fact for e in replacing)
        after = self._version(
            edge,
            f"No longer true since {since}; replaced by: {facts}",
            fact=edge.fact,
            replaced_by=[e.uuid for e in replacing],
            **dates,
        )
        self.tracer.record_operation(
            "graphiti.invalidate",
            kind="update",
            inputs=[message, before, *(self._current(e) for e in replacing)],
            outputs=[after],
            memory_id=edge.uuid,
            **dates,
            **common,
        )

    # -- remove_episode --------------------------------------------------------------------------

    async def remove_episode(self, episode_uuid: str) -> None:
        """``Graphiti.remove_episode`` unchanged, recorded as the deletion of each edge that
        was gone afterwards (read before and after the call)."""
        driver = self.graphiti.driver
        try:
            episode = await EpisodicNode.get_by_uuid(driver, episode_uuid)
            edges: list[EntityEdge] = await EntityEdge.get_by_uuids(driver, episode.entity_edges)
        except NodeNotFoundError:  # no such episode: Graphiti's own call raises its own error
            await self.graphiti.remove_episode(episode_uuid)
            return
        await self.graphiti.remove_episode(episode_uuid)
        kept = {e.uuid for e in await EntityEdge.get_by_uuids(driver, [e.uuid for e in edges])}
        gone = [e for e in edges if e.uuid not in kept]
        self.tracer.record_operation(
            "graphiti.remove_episode",
            kind="deletion",
            inputs=[self._current(e) for e in gone],
            outputs=[
                self.tracer.tombstone(e.uuid, id=f"graphiti:{e.uuid}:deleted", stamp=False)
                for e in gone
            ],
            session_id=episode.group_id,
            episode_uuid=episode_uuid,
            deleted_edges=[e.uuid for e in gone],
            kept_edges=sorted(kept),
            **self._common(),
        )

    # -- search ----------------------------------------------------------------------------------

    async def search(self, query: str, *args: Any, **kwargs: Any) -> list[EntityEdge]:
        """``Graphiti.search`` unchanged, recorded as a retrieval of the edges it returned."""
        edges: list[EntityEdge] = await self.graphiti.search(query, *args, **kwargs)
        bound = inspect.signature(Graphiti.search).bind(self.graphiti, query, *args, **kwargs)
        bound.apply_defaults()
        self._record_search(
            "graphiti.search",
            query,
            [*map(self._returned, edges)],
            [fact_line(e) for e in edges],
            bound.arguments.get("group_ids") or [],
            edges=[e.uuid for e in edges],
            expired_edges=[e.uuid for e in edges if e.expired_at is not None],
            num_results=bound.arguments.get("num_results"),
        )
        return edges

    async def search_(self, query: str, *args: Any, **kwargs: Any) -> SearchResults:
        """``Graphiti.search_`` unchanged, recorded as a retrieval of what it returned: the
        edges' versions and the episodes' messages are consumed; the context holds the edges'
        facts, then the entities' and communities' summaries and the episodes' texts (what a
        caller hands on, as Graphiti's own ``search_results_to_context_string`` does)."""
        results: SearchResults = await self.graphiti.search_(query, *args, **kwargs)
        bound = inspect.signature(Graphiti.search_).bind(self.graphiti, query, *args, **kwargs)
        lines = [
            *map(fact_line, results.edges),
            *(f"{n.name}: {n.summary}" for n in results.nodes),
            *(f"{c.name}: {c.summary}" for c in results.communities),
            *(e.content for e in results.episodes),
        ]
        self._record_search(
            "graphiti.search_",
            query,
            [*map(self._returned, results.edges), *(episode_id(e.uuid) for e in results.episodes)],
            lines,
            bound.arguments.get("group_ids") or [],
            edges=[e.uuid for e in results.edges],
            expired_edges=[e.uuid for e in results.edges if e.expired_at is not None],
            nodes=[n.uuid for n in results.nodes],
            episodes=[e.uuid for e in results.episodes],
            communities=[c.uuid for c in results.communities],
        )
        return results

    def _record_search(
        self,
        name: str,
        query: str,
        found: list[UnitLike],
        lines: list[str],
        groups: list[str],
        **attributes: Any,
    ) -> None:
        question = self.tracer.query(query)
        context = self.tracer.context("\n".join(lines))
        self.tracer.record_operation(
            name,
            kind="retrieval",
            inputs=[question, *found],
            outputs=[context],
            session_id=groups[0] if len(groups) == 1 else None,
            group_ids=list(groups),
            **attributes,
            **self._common(),
        )
        self._pending.add(question, context)


def trace_graphiti(
    graphiti: Graphiti, client: MemTraceClient | Tracer, *, spool_dir: str | None = None
) -> TracedGraphiti:
    """Wrap ``graphiti`` so that its episodes, removals and searches go to MemTrace."""
    return TracedGraphiti(graphiti, as_tracer(client, spool_dir))
