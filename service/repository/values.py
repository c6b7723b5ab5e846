"""Neo4j's temporal values as Python ones, converted here once for every repository module.

The driver returns ``neo4j.time.DateTime`` and ``Date``, which pydantic and ``json`` do not take;
the repository hands out only ``datetime`` and ``date``.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from neo4j.time import Date, DateTime


def native(value: Any) -> Any:
    """``value`` with every Neo4j date or datetime in it (in lists too) as Python's."""
    if isinstance(value, DateTime | Date):
        return value.to_native()
    if isinstance(value, list):
        return [native(v) for v in value]
    return value


def utc(value: Any) -> datetime | None:
    """A datetime in UTC (a naive one is taken as UTC); None for anything else."""
    value = native(value)
    if not isinstance(value, datetime):
        return None
    return value.astimezone(UTC) if value.tzinfo else value.replace(tzinfo=UTC)
