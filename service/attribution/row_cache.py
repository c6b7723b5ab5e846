"""Reading an attribution's nodes through a cache of the nodes a job has read and decoded before.

Why: where a retrieval consumes every memory live at question time (as a vector search reads
the whole store), one answer's ancestors are its whole conversation's trace, and what derives
from an evidence message reaches every later retrieval of it, each with every memory as an
input. The cases of one conversation then read, transfer and decode the same thousands of rows
(and tens of thousands of edges) again and again. So a job lists each case's nodes by id
(``attribution/ancestor_ids``, ``attribution/descendant_ids``: the same traversal, the same
order) and fetches only the rows it has not read yet (``attribution/nodes``), each decoded once
into a :class:`~service.attribution.graph.NodeRead` (``rows.node_read``), which every case's
graph then shares.

What it means for results: none, as long as a node read earlier in the job is still what it
was; units and operations are written once, except a unit stored by id only (``defined`` false),
which a later batch may define: those are never kept, always read again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, LiteralString

from neo4j import AsyncManagedTransaction

from cypher import query
from service.attribution.graph import NodeRead
from service.attribution.rows import node_read

ROWS_KEPT = 200_000
"""Reads kept at most (a few KB each with their edges); past it the cache starts again."""

Key = tuple[bool, str]  # (is an operation, id): a unit and an operation may share an id


@dataclass
class RowCache:
    """The decoded reads of the units and operations read so far, by :data:`Key`."""

    limit: int = ROWS_KEPT
    reads: dict[Key, NodeRead] = field(default_factory=dict)

    def keep(self, key: Key, read: NodeRead) -> None:
        if len(self.reads) >= self.limit:
            self.reads.clear()
        self.reads[key] = read


async def listed_reads(
    tx: AsyncManagedTransaction,
    project: str,
    name: LiteralString,
    cache: RowCache,
    **params: Any,
) -> list[NodeRead]:
    """The reads of the nodes that the listing ``name`` (``attribution/ancestor_ids`` or
    ``descendant_ids``) names, in its order: from ``cache`` when read before, else fetched in
    one query and decoded (and kept when they cannot change)."""
    return (await listing(tx, project, name, cache, **params))[1]


async def listing(
    tx: AsyncManagedTransaction,
    project: str,
    name: LiteralString,
    cache: RowCache,
    **params: Any,
) -> tuple[int, list[NodeRead]]:
    """How many nodes the listing ``name`` named, and their reads (:func:`listed_reads`)."""
    result = await tx.run(query(name), project=project, **params)
    record = await result.single()
    # [id, is operation, cacheable] as the listing returns them: a string and two booleans
    # (cacheable null for a unit with no `defined`), taken as they are: a case lists thousands
    listed: list[list[Any]] = record["nodes"] if record else []
    kept = cache.reads
    missing = [(op, uid) for uid, op, _ in listed if (op, uid) not in kept]
    fetched: dict[Key, NodeRead] = {}
    if missing:
        result = await tx.run(
            query("attribution/nodes"),
            project=project,
            unit_ids=[uid for op, uid in missing if not op],
            operation_ids=[uid for op, uid in missing if op],
        )
        record = await result.single()
        for row in record["nodes"] if record else []:
            read = node_read(row)
            fetched[(read.node.is_operation, read.node.id)] = read
    reads = []
    for uid, op, keepable in listed:
        key = (op, uid)
        found = fetched.get(key) or kept.get(key)
        if found is None:  # one transaction reads both: only a node deleted meanwhile
            continue
        if keepable and key in fetched:
            cache.keep(key, found)
        reads.append(found)
    return len(listed), reads
