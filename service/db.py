"""The one Neo4j driver of a process, schema bootstrap, and driver errors turned into ours.

The driver is created in the FastAPI lifespan (or by a CLI command) and passed down; nothing else
builds one. Only ``service.repository`` runs queries through it.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable
from typing import ParamSpec, TypeVar

from neo4j import AsyncDriver, AsyncGraphDatabase
from neo4j.exceptions import (
    ClientError,
    DriverError,
    ServiceUnavailable,
    SessionExpired,
    TransientError,
)

from cypher import names, query
from service.errors import QueryFailed, StoreUnavailable
from service.settings import Settings

log = logging.getLogger(__name__)

# Neo4j codes (suffixes) of a query stopped for its memory: per-transaction limit, heap.
OUT_OF_MEMORY = ("MemoryPoolOutOfMemoryError", "OutOfMemoryError", "TransactionMemoryLimit")

P = ParamSpec("P")
T = TypeVar("T")


def create_driver(settings: Settings) -> AsyncDriver:
    """A driver that gives up quickly when Neo4j is down, so callers get a 503, not a hang."""
    return AsyncGraphDatabase.driver(
        settings.neo4j_uri,
        auth=(settings.neo4j_user, settings.neo4j_password.get_secret_value()),
        connection_timeout=settings.neo4j_connect_timeout_s,
        connection_acquisition_timeout=settings.neo4j_connect_timeout_s * 2,
        max_transaction_retry_time=settings.neo4j_retry_time_s,
        # Server notifications (e.g. "property fp does not exist" on an empty graph) are noise
        # in a service log and cost a little on every query.
        notifications_min_severity="OFF",
    )


def store_errors(func: Callable[P, Awaitable[T]]) -> Callable[P, Awaitable[T]]:
    """Turn the driver's "database not reachable" family into ``StoreUnavailable`` (503).

    A query Neo4j stopped for using too much memory is a ``TransientError`` too, but retrying
    it later cannot help: it is a ``QueryFailed`` (422), without Retry-After.
    """

    @functools.wraps(func)
    async def wrapper(*args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return await func(*args, **kwargs)
        except TransientError as e:
            if (e.code or "").endswith(OUT_OF_MEMORY):
                log.warning("neo4j stopped a query in %s: %s", func.__name__, e.code)
                raise QueryFailed(
                    "the query needed more memory than Neo4j lets one transaction use"
                ) from e
            log.warning("neo4j unavailable in %s: %s", func.__name__, type(e).__name__)
            raise StoreUnavailable("the graph store is not reachable; retry later") from e
        except (ServiceUnavailable, SessionExpired) as e:
            log.warning("neo4j unavailable in %s: %s", func.__name__, type(e).__name__)
            raise StoreUnavailable("the graph store is not reachable; retry later") from e
        except DriverError as e:
            log.warning("neo4j driver error in %s: %s", func.__name__, type(e).__name__)
            raise StoreUnavailable("the graph store did not answer; retry later") from e

    return wrapper


@store_errors
async def apply_schema(driver: AsyncDriver, database: str) -> None:
    """Create every constraint and index in ``cypher/schema`` (idempotent), then wait for them."""
    for name in names("schema"):
        if name == "schema/await_indexes":
            continue
        try:
            await driver.execute_query(query(name), database_=database)
        except ClientError as e:
            # Another process created it between IF NOT EXISTS and us: that is fine.
            if "EquivalentSchemaRuleAlreadyExists" not in (e.code or ""):
                raise
    await driver.execute_query(query("schema/await_indexes"), database_=database)
