"""Neo4j's temporal values as Python ones, converted here once for every repository module.

The driver returns ``neo4j.time.DateTime`` and ``Date``, which pydantic and ``json`` do not take;
the repository hands out only ``datetime`` and ``date``.

Reads of many nodes project a DateTime as three integers instead,
``[epoch seconds, nanosecond, offset seconds]`` (e.g. ``cypher/cases/ancestors.cypher``): the
driver builds a DateTime through pytz and a calendar computed in Python, which costs tens of
microseconds a value, most of the time such a read spends in Python (:func:`from_epoch`).
A statement that needs only the instant (the report's case times) returns epoch milliseconds
(:func:`from_epoch_ms`).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any

from neo4j.time import Date, DateTime

_ZONES: dict[int, timezone] = {0: UTC}
_EPOCH = datetime(1970, 1, 1)


def native(value: Any) -> Any:
    """``value`` with every Neo4j date or datetime in it (in lists too) as Python's."""
    if isinstance(value, DateTime | Date):
        return value.to_native()
    if isinstance(value, list):
        return [native(v) for v in value]
    return value


def from_epoch(value: list[int] | None) -> datetime | None:
    """A DateTime projected as ``[epoch seconds, nanosecond, offset seconds]`` as the driver's
    ``DateTime.to_native()`` gives it: the same instant and the same local time and offset (so
    the same ISO text), nanoseconds cut to microseconds. None stays None."""
    if value is None:
        return None
    seconds, nanosecond, offset = value
    zone = _ZONES.get(offset)
    if zone is None:
        zone = _ZONES.setdefault(offset, timezone(timedelta(seconds=offset)))
    # Local time first: a UTC instant just before year 1 can still be a local time in year 1
    # (and one just after 9999 a local time in 9999), which datetime holds.
    local = _EPOCH + timedelta(seconds=seconds + offset, microseconds=nanosecond // 1000)
    return local.replace(tzinfo=zone)


def from_epoch_ms(ms: int | None) -> datetime | None:
    """Milliseconds since the epoch, as a statement returns a time to skip the driver's slow
    ``DateTime`` decoding (~80 us each), as a UTC datetime; exact (no float in between)."""
    return None if ms is None else _EPOCH.replace(tzinfo=UTC) + timedelta(milliseconds=ms)
