"""Where the walk gets more of the graph than the answer's ancestors: what derives from some
units, the source messages of a case's scope, and the writes of the memory stores it names."""

from __future__ import annotations

from typing import Protocol

from service.attribution.graph import NodeRead, ScopeRead
from service.attribution.scope import Scope


class GraphSource(Protocol):
    """Where the walk gets more of the graph, decoded; the service backs it with the
    repository (``service.RepositorySource``), the in-process benchmark with its own graph."""

    async def descendants(self, unit_ids: list[str]) -> list[NodeRead]:
        """Everything derived from ``unit_ids`` (the units included)."""
        ...

    async def scope_messages(self, scope: Scope) -> ScopeRead:
        """The source messages in ``scope`` (see :mod:`.scope`) recorded no later than
        ``scope.until``, latest first (a message's ``ts`` is when it was recorded), and whether
        a limit cut them."""
        ...

    async def store_writes(self, scope: Scope) -> list[NodeRead]:
        """The versions and tombstones of ``scope.stores`` written by ``scope.until``, with the
        operations that wrote them (the latest, up to the graph limit)."""
        ...


class RememberedSource:
    """A :class:`GraphSource` that reads each thing once per case: the second reading of a
    result (:mod:`.second_reading`) asks for what the first walk already read. It keeps the
    wrapped source's ``embedder`` (the dense ranking of the evidence search), if it has one."""

    def __init__(self, source: GraphSource) -> None:
        self.source = source
        self.embedder = getattr(source, "embedder", None)
        self._descendants: dict[tuple[str, ...], list[NodeRead]] = {}
        self._scopes: dict[Scope, ScopeRead] = {}
        self._stores: dict[Scope, list[NodeRead]] = {}

    async def descendants(self, unit_ids: list[str]) -> list[NodeRead]:
        key = tuple(unit_ids)
        if key not in self._descendants:
            self._descendants[key] = await self.source.descendants(unit_ids)
        return self._descendants[key]

    async def scope_messages(self, scope: Scope) -> ScopeRead:
        if scope not in self._scopes:
            self._scopes[scope] = await self.source.scope_messages(scope)
        return self._scopes[scope]

    async def store_writes(self, scope: Scope) -> list[NodeRead]:
        if scope not in self._stores:
            self._stores[scope] = await self.source.store_writes(scope)
        return self._stores[scope]
