"""Times given in requests, brought to UTC before they reach Neo4j."""

from __future__ import annotations

from datetime import UTC, datetime

from service.errors import InvalidInput


def in_utc(moment: datetime | None, name: str) -> datetime | None:
    """``moment`` in UTC (no zone: taken as UTC). Neo4j takes offsets up to 18 hours and will
    not compare zoned times with unzoned ones, so the window reaches it in UTC; a time that
    leaves years 1-9999 on the way (``0001-01-01T00:00+01:00``) is a 422 naming the filter."""
    if moment is None:
        return None
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    try:
        return moment.astimezone(UTC)
    except OverflowError:
        raise InvalidInput(
            f"{name} is out of range once converted to UTC (years 1-9999)",
            details=[{"loc": ["query", name], "msg": "out of range in UTC"}],
        ) from None
