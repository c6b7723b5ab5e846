"""Paging query parameters shared by the list endpoints (``/cases``, ``/attributions``,
``/audits/{name}``).

Neo4j's ``SKIP`` and ``LIMIT`` are 64-bit integers, and an audit asks for ``skip + limit`` rows
more; a ``skip`` near 2**63 was a 500. ``MAX_SKIP`` is far below that and far above any real
page (a billion rows of one project), so every accepted value is safe and any larger one is a
422 naming ``skip``.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Query

MAX_SKIP = 1_000_000_000

Skip = Annotated[int, Query(ge=0, le=MAX_SKIP, description="Start here (0-based); use it to page.")]


def limit_query(maximum: int, description: str = "At most this many items.") -> Any:
    """The ``limit`` parameter of a list endpoint: from 1 to ``maximum``."""
    return Query(ge=1, le=maximum, description=description)
