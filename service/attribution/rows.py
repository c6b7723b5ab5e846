"""Neo4j's projected rows of units and operations, decoded into what the engine reads.

The repository's reads (``attribution/ancestors``, ``descendants``, ``nodes`` and
``scope_messages``) project every node one way:
``{id, kind, name, content, system, session_id, attributes, defined, ts, is_operation,
edges: [[type, unit_id, position]]}`` (``attributes`` as stored: canonical JSON). They are
decoded here, where they come out of Neo4j, and nowhere else: into a
:class:`~service.attribution.graph.NodeRead` (the :class:`~service.attribution.graph.Node`, and an
operation's input and output unit ids in position order), or a :class:`ScopeMessage` for a
scope's message. No row crosses into the engine.

Why decoded once: a job's cases share most of their reads (``row_cache``, ``shared_graph``,
``scope_reads``), and decoding a row (its attributes' JSON, its timestamp, its edges' order) was
a large part of a job's CPU when each case's graph did it again. A read is immutable, so every
case's graph shares it.

``ts`` comes from those queries as ``[epoch seconds, nanosecond, offset seconds]`` rather than a
Neo4j DateTime: the driver's DateTime hydration (pytz, a calendar computed in Python) cost about
a third of an attribution job's CPU, and three integers make the same instant and local time in
microseconds (:func:`timestamp`, with ``service.neo4j_values.from_epoch``, which the subgraph
endpoint shares). A DateTime or datetime (the in-process benchmark's rows) is taken as it is.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from neo4j.time import DateTime

from graph_schema import ENTRY_KEYS
from service.attribution.graph import Node, NodeRead, ScopeMessage
from service.neo4j_values import from_epoch

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)


def node_read(row: Mapping[str, Any]) -> NodeRead:
    """A projected row of a unit or an operation, decoded."""
    node = _node(row)
    if not node.is_operation:
        return NodeRead(node)
    ins: list[tuple[int, str]] = []
    outs: list[tuple[int, str]] = []
    for kind, uid, pos in row["edges"]:  # one pass: a retrieval may read the whole store
        if kind == "CONSUMES":
            ins.append((pos, uid))
        elif kind == "PRODUCES":
            outs.append((pos, uid))
    ins.sort()
    outs.sort()
    return NodeRead(node, tuple([uid for _, uid in ins]), tuple([uid for _, uid in outs]))


def scope_message(row: Mapping[str, Any]) -> ScopeMessage:
    """A projected row of ``attribution/scope_messages``, decoded."""
    return ScopeMessage(_node(row), nanoseconds(row.get("ts")))


def timestamp(value: Any) -> datetime | None:
    """A row's ``ts`` as an aware datetime. ``[seconds, nanosecond, offset]`` gives what the
    driver's ``DateTime.to_native()`` gives: the same instant, the same local time (so the same
    ``.date()``), nanoseconds cut to microseconds."""
    if isinstance(value, list):
        return from_epoch(value)
    if isinstance(value, DateTime):
        value = value.to_native()
    return _aware(value)


def nanoseconds(value: Any) -> int | None:
    """An instant as nanoseconds since the epoch: ``[seconds, nanosecond, offset]`` as the
    queries return it, or a datetime. Integers compare exactly as Neo4j compares the instants
    (a datetime would drop the nanoseconds) and far faster than datetimes."""
    if value is None:
        return None
    if isinstance(value, list):
        return int(value[0]) * 1_000_000_000 + int(value[1])
    micros: int = (value - _EPOCH) // _MICROSECOND
    return micros * 1000


def _node(row: Mapping[str, Any]) -> Node:
    raw = row.get("attributes")
    attributes = (json.loads(raw) if isinstance(raw, str) else raw) if raw else {}
    if not isinstance(attributes, dict):
        attributes = {}
    entry = next((str(attributes[k]) for k in ENTRY_KEYS if attributes.get(k) is not None), None)
    return Node(
        id=row["id"],
        is_operation=bool(row["is_operation"]),
        kind=row.get("kind") or "other",
        name=row.get("name") or "",
        content=row.get("content") or "",
        ts=timestamp(row.get("ts")),
        entry=entry,
        system=row.get("system") or "",
        session_id=row.get("session_id") or "",
        attributes=attributes,
    )


def _aware(ts: datetime | None) -> datetime | None:
    """Timestamps compare only when all carry a zone: a naive one is taken as UTC."""
    if ts is None or ts.tzinfo is not None:
        return ts
    return ts.replace(tzinfo=UTC)
