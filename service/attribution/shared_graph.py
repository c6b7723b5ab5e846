"""A job's chunk of cases reads their ancestry (and their evidence's descent) once, and each
case takes its own part of it in Python.

Why: where every retrieval consumes the whole store, each case's ancestry is most of its
conversation's trace (~840 nodes on LoCoMo), nearly all of it shared with the other cases of the
conversation; read case by case, Neo4j traversed it and the driver decoded its listing once per
case: about half of a job's Neo4j time, and the listings' decoding in Python. So a chunk lists
the union of its answers' ancestors in one statement (``attribution/ancestor_ids`` from every
answer at once: Neo4j still expands from each, but lists and sends each node once), fetches the
rows the job has not read (``row_cache``: each decoded once into a ``NodeRead``), and walks each
case's ancestors over those reads' edges; the descendants of the evidence likewise
(``attribution/descendant_ids``), and a descent read during a walk (the evidence found by
search, the redundancy check) joins the chunk's for its later cases.

Why the walk in Python finds what Neo4j's traversal finds: the union of the ancestors of some
units holds every ancestor of each node in it (an ancestor's ancestor is one), so every
producer and every input of its nodes is among its reads: an operation's read holds all its
CONSUMES and PRODUCES edges (its ``inputs`` and ``outputs``), and each PRODUCES has its reverse
PRODUCED_BY, which the traversal follows (``cypher/ingest/create_operations.cypher`` writes them
together). The walk from one answer over these edges therefore reaches exactly the nodes the
per-case traversal reaches. Descendants the same way: every consumer of a unit in a union of
descendants is in it.

Bounds: the union is read under the same node limit as one case's read (``limit``); when it
would hold more, some of a case's reads might be missing, so the chunk's cases read their own,
each bounded as before (:func:`read_region` answers None).

Order: a case's reads come in the union's order, not its own traversal's. The walk does not
depend on it: an operation's read holds its edges in position order, and the engine orders
operations by time then id wherever it chooses among them. (Which of several operations producing
the answer unit answers is the first listed; answers have one producer.)

Freshness: the chunk's reads are made in one transaction, as before; a descent read during a walk
is added in its own, and the chunk's later cases take it from there (what is written to the
project meanwhile is seen by the next chunk, as a scope's messages are, ``scope_reads``).
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from dataclasses import dataclass, field
from typing import LiteralString

from neo4j import AsyncManagedTransaction

from service.attribution.graph import NodeRead
from service.attribution.row_cache import RowCache, listing

ANCESTORS: LiteralString = "attribution/ancestor_ids"
DESCENDANTS: LiteralString = "attribution/descendant_ids"


@dataclass
class Region:
    """Reads closed under one direction of the lineage (every node the traversal reaches from one
    of them is among them), in the order they were listed, with their edges that way."""

    descending: bool
    units: dict[str, tuple[int, NodeRead]] = field(default_factory=dict)
    operations: dict[str, tuple[int, NodeRead]] = field(default_factory=dict)
    _ops_of: defaultdict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    _units_of: dict[str, tuple[str, ...]] = field(default_factory=dict)
    growing: asyncio.Lock = field(default_factory=asyncio.Lock)
    """Held while a read adds to the region: cases in flight at once that lack the same units
    wait for one read of them rather than each reading them."""

    def add(self, reads: list[NodeRead]) -> None:
        """Merge the reads of one complete listing (a region of its own)."""
        for read in reads:
            uid = read.node.id
            if not read.node.is_operation:
                if uid not in self.units:
                    self.units[uid] = (len(self.units) + len(self.operations), read)
                continue
            if uid in self.operations:
                continue
            self.operations[uid] = (len(self.units) + len(self.operations), read)
            # ancestors: an operation leads to what it read, a unit to what produced it;
            # descendants: an operation to what it produced, a unit to what read it (the
            # read's own tuples, shared).
            inputs, outputs = read.inputs, read.outputs
            ahead, behind = (outputs, inputs) if self.descending else (inputs, outputs)
            self._units_of[uid] = ahead
            ops_of = self._ops_of
            for unit in behind:
                ops_of[unit].append(uid)

    def holds(self, unit_ids: list[str]) -> bool:
        """Whether the region answers for every one of these units."""
        return all(uid in self.units for uid in unit_ids)

    def reach(self, unit_ids: list[str]) -> list[NodeRead]:
        """The reads of the units and of every node reached from them, in the region's order."""
        units = {uid for uid in unit_ids if uid in self.units}
        ops: set[str] = set()
        frontier = units
        while frontier:
            # a retrieval reading the whole store shares its hundreds of inputs with every other
            # retrieval: sets merged in C, not edge by edge
            found: set[str] = set()
            for uid in frontier:
                found.update(self._ops_of.get(uid, ()))
            found -= ops
            ops |= found
            frontier = set()
            for op in found:
                frontier.update(self._units_of[op])
            frontier -= units
            units |= frontier
        listed = [self.units[u] for u in units if u in self.units]
        listed += [self.operations[o] for o in ops]
        listed.sort(key=_position)
        return [read for _, read in listed]


def _position(item: tuple[int, NodeRead]) -> int:
    return item[0]


async def read_region(
    tx: AsyncManagedTransaction,
    project: str,
    descending: bool,
    unit_ids: list[str],
    limit: int,
    cache: RowCache,
) -> Region | None:
    """The region of ``unit_ids`` (their ancestors, or their descendants when ``descending``),
    or None when it holds more than ``limit`` nodes (then the nodes of each unit's own read would
    not all be in it)."""
    region = Region(descending)
    if not unit_ids:
        return region
    return region if await extend(tx, project, region, unit_ids, limit, cache) else None


async def extend(
    tx: AsyncManagedTransaction,
    project: str,
    region: Region,
    unit_ids: list[str],
    limit: int,
    cache: RowCache,
) -> bool:
    """Add the region of ``unit_ids`` to ``region``: False (and nothing added) when it holds
    more than ``limit`` nodes."""
    name = DESCENDANTS if region.descending else ANCESTORS
    listed, reads = await listing(tx, project, name, cache, unit_ids=unit_ids, limit=limit + 1)
    if listed > limit:
        return False
    region.add(reads)
    return True
