"""Project placement: which Neo4j store holds a project's graph. Pure rules, no I/O.

A deployment has one default store (``MEMTRACE_NEO4J_URI`` and friends) and, optionally, more
named stores (``MEMTRACE_NEO4J_STORES``); ``MEMTRACE_NEO4J_PLACEMENT`` maps projects to them by
exact name or glob pattern (``fnmatch``: ``*``, ``?``, ``[...]``, case-sensitive like project
names). How a project is placed:

1. an exact name in the placement wins;
2. else the first pattern that matches, in the order the placement lists them (JSON objects keep
   their order), so a narrow pattern listed before a broad one takes precedence;
3. else the default store.

Every project lives on exactly one store, so a project's reads, writes, audits, ad-hoc Cypher and
attribution jobs all run on one database and never see another store's data. Moving a project to
another store is not done for you: the graph stays where it was written (export and re-ingest).
"""

from __future__ import annotations

from collections.abc import Mapping
from fnmatch import fnmatchcase

from pydantic import BaseModel, ConfigDict, Field, SecretStr

DEFAULT_STORE = "default"
"""The name of the store of ``MEMTRACE_NEO4J_URI`` (and ``_DATABASE``, ``_USER``, ``_PASSWORD``)."""

_GLOB_CHARACTERS = frozenset("*?[")


class StoreConfig(BaseModel):
    """One Neo4j store: where it is and how to sign in. ``uri`` may be ``bolt://`` (one
    server), ``neo4j://`` or ``neo4j+s://`` (routing: a cluster serves reads from secondaries)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    uri: str = Field(pattern=r"^(bolt|neo4j)(\+s|\+ssc)?://", description="Bolt or routing URI.")
    database: str = Field("neo4j", min_length=1, description="Database name on that server.")
    user: str = Field("neo4j", description="Neo4j user (ignored when auth is disabled).")
    password: SecretStr = Field(SecretStr(""), description="Neo4j password.")


class PlacementError(ValueError):
    """The placement names a store that is not configured, or a store uses a reserved name."""


def is_pattern(key: str) -> bool:
    return any(c in _GLOB_CHARACTERS for c in key)


def check_placement(placement: Mapping[str, str], stores: Mapping[str, StoreConfig]) -> None:
    """Refuse (at start-up) a placement that points at an unknown store, or a store that takes
    the default store's name."""
    if DEFAULT_STORE in stores:
        raise PlacementError(
            f"MEMTRACE_NEO4J_STORES may not define {DEFAULT_STORE!r}: that name is the store "
            "of MEMTRACE_NEO4J_URI"
        )
    known = {DEFAULT_STORE, *stores}
    unknown = sorted({store for store in placement.values() if store not in known})
    if unknown:
        raise PlacementError(
            f"MEMTRACE_NEO4J_PLACEMENT names store(s) not in MEMTRACE_NEO4J_STORES: "
            f"{', '.join(unknown)} (known: {', '.join(sorted(known))})"
        )


def store_of(project: str, placement: Mapping[str, str]) -> str:
    """The name of the store holding ``project`` (rules in the module docstring)."""
    exact = placement.get(project)  # project names hold no glob characters
    if exact is not None:
        return exact
    for key, store in placement.items():
        if is_pattern(key) and fnmatchcase(project, key):
            return store
    return DEFAULT_STORE
