"""Neo4j's temporal values as Python ones, converted here once for every repository module.

The driver returns ``neo4j.time.DateTime`` and ``Date``, which pydantic and ``json`` do not take;
the repository hands out only ``datetime`` and ``date``. A statement that returns many times
may return them as epoch milliseconds instead (``from_epoch_ms``).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from neo4j.time import Date, DateTime


def native(value: Any) -> Any:
    """``value`` with every Neo4j date or datetime in it (in lists too) as Python's."""
    if isinstance(value, DateTime | Date):
        return value.to_native()
    if isinstance(value, list):
        return [native(v) for v in value]
    return value


EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def from_epoch_ms(ms: int | None) -> datetime | None:
    """Milliseconds since the epoch, as a statement returns a time to skip the driver's slow
    ``DateTime`` decoding (~80 us each), as a UTC datetime; exact (no float in between)."""
    return None if ms is None else EPOCH + timedelta(milliseconds=ms)
