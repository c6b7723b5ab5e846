"""The Neo4j drivers of a process (one per store), schema bootstrap, and driver errors turned
into ours.

``Stores`` holds one driver per configured store (``service.placement``): made in the FastAPI
lifespan, closed at shutdown; a request gets a session on its acting project's store
(``service.dependencies``). The attribution job thread has its own ``Stores`` (an async driver
belongs to the event loop that made it). Only the features' ``repository`` modules run queries
through them.
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import ParamSpec, TypeVar

from neo4j import AsyncDriver, AsyncGraphDatabase, AsyncSession
from neo4j.exceptions import (
    ClientError,
    DriverError,
    Neo4jError,
    ServiceUnavailable,
    SessionExpired,
    TransientError,
)

from cypher import names, query
from graph_schema import scope_names
from service.errors import ConcurrentChange, QueryFailed, StoreUnavailable
from service.placement import DEFAULT_STORE, StoreConfig, store_of
from service.settings import Settings

log = logging.getLogger(__name__)

# Neo4j codes (suffixes) of a query stopped for its memory: per-transaction limit, heap.
OUT_OF_MEMORY = ("MemoryPoolOutOfMemoryError", "OutOfMemoryError", "TransactionMemoryLimit")

# The code of a write to a node a concurrent transaction deleted after this one read it (reads
# take no lock: read committed). Not transient for the driver, which does not rerun it.
VANISHED = "Neo.ClientError.Statement.EntityNotFound"
RACE_RERUNS = 5
"""How often a write raced by a concurrent deletion is run again before the request answers
``ConcurrentChange`` (503): each rerun reads the store as it now is."""

P = ParamSpec("P")
T = TypeVar("T")


def vanished(error: Neo4jError) -> bool:
    """Whether ``error`` is a write to a node a concurrent transaction deleted meanwhile."""
    return error.code == VANISHED


async def write_rerun(
    session: AsyncSession,
    work: Callable[..., Awaitable[T]],
    *args: object,
) -> T:
    """``session.execute_write(work, *args)``, run again when a concurrent deletion removed a
    node the transaction had read before it wrote to it (``VANISHED``): the rerun reads the
    store as it now is, as if it had started after the deletion. Deadlocks are retried by the
    driver itself (``TransientError``)."""
    raced: ClientError | None = None
    for _ in range(RACE_RERUNS):
        try:
            return await session.execute_write(work, *args)
        except ClientError as e:
            if not vanished(e):
                raise
            raced = e
    raise ConcurrentChange(
        "concurrent deletions kept removing what this request writes; send it again"
    ) from raced


def default_store(settings: Settings) -> StoreConfig:
    """The store of ``MEMTRACE_NEO4J_URI``/``_DATABASE``/``_USER``/``_PASSWORD``."""
    return StoreConfig(
        uri=settings.neo4j_uri,
        database=settings.neo4j_database,
        user=settings.neo4j_user,
        password=settings.neo4j_password,
    )


def create_driver(settings: Settings, store: StoreConfig | None = None) -> AsyncDriver:
    """A driver for ``store`` (default: the default store) that gives up quickly when Neo4j is
    down, so callers get a 503, not a hang. A ``neo4j://`` URI gives a routing driver."""
    store = store or default_store(settings)
    return AsyncGraphDatabase.driver(
        store.uri,
        auth=(store.user, store.password.get_secret_value()),
        connection_timeout=settings.neo4j_connect_timeout_s,
        connection_acquisition_timeout=settings.neo4j_connect_timeout_s * 2,
        max_transaction_retry_time=settings.neo4j_retry_time_s,
        # Server notifications (e.g. "property fp does not exist" on an empty graph) are noise
        # in a service log and cost a little on every query.
        notifications_min_severity="OFF",
    )


@dataclass
class Store:
    """One store as a request uses it: its driver, its database, whether its schema is on."""

    name: str
    driver: AsyncDriver
    database: str
    schema_ready: bool = False


class Stores:
    """One driver per configured store (creating a driver does no I/O), and the placement that
    says which of them holds a project."""

    def __init__(self, settings: Settings) -> None:
        configs = {DEFAULT_STORE: default_store(settings), **settings.neo4j_stores}
        self._placement = settings.neo4j_placement
        self._stores = {
            name: Store(name, create_driver(settings, config), config.database)
            for name, config in configs.items()
        }

    def for_project(self, project: str) -> Store:
        """The store holding ``project``."""
        return self._stores[store_of(project, self._placement)]

    async def ready_for(self, project: str) -> Store:
        """The store holding ``project``, its schema applied (once: a store that was down at
        start-up gets it on first use)."""
        store = self.for_project(project)
        if not store.schema_ready:
            await apply_schema(store.driver, store.database)
            store.schema_ready = True
        return store

    def all(self) -> list[Store]:
        """Every store, the default first."""
        return list(self._stores.values())

    async def apply_schemas(self) -> None:
        """Apply the schema on every store that answers; one that does not gets it on first
        use (``ready_for``)."""
        for store in self._stores.values():
            try:
                await apply_schema(store.driver, store.database)
                store.schema_ready = True
            except StoreUnavailable:
                log.warning(
                    "neo4j store %r not reachable; its schema is applied on first use", store.name
                )

    async def close(self) -> None:
        for store in self._stores.values():
            await store.driver.close()


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
            if (e.code or "").endswith("DeadlockDetected"):
                # Past the driver's own retries: concurrent writes, not an absent store.
                log.warning("neo4j deadlocks outlasted retries in %s", func.__name__)
                raise ConcurrentChange(
                    "concurrent writes to the same nodes kept deadlocking; send it again"
                ) from e
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
    """Create every constraint and index in ``cypher/schema`` (idempotent), wait for them, then
    bring data written by an earlier version up to date (``cypher/migrations``)."""
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
    await _backfill_reach(driver, database)
    await _backfill_rewrites(driver, database)
    await _backfill_idle(driver, database)
    await _drop_stale_attributions(driver, database)
    await _backfill_scope_names(driver, database)
    for migration in MIGRATIONS:
        await migration(driver, database)


BACKFILL_BATCH = 5_000

Migration = Callable[[AsyncDriver, str], Awaitable[None]]
MIGRATIONS: list[Migration] = []
"""Start-up migrations a feature keeps in Python (its rule lives in the feature, and the
kernel imports no feature): run by ``apply_schema`` after its own, in the order registered.
A feature registers one when its module is imported (``service.reports.counts.repository``,
imported by every writer that keeps its counts)."""


def register_migration(migration: Migration) -> None:
    """Run ``migration(driver, database)`` at every schema bootstrap (once per function)."""
    if migration not in MIGRATIONS:
        MIGRATIONS.append(migration)


async def _repeat_until_none(driver: AsyncDriver, database: str, name: str, done: str) -> None:
    """Run the migration ``name`` (a bounded batch, returning how many nodes it changed as
    ``changed``) until it changes none, logging each batch as ``done`` (a %d format)."""
    while True:
        records, _, _ = await driver.execute_query(
            query(name), batch=BACKFILL_BATCH, database_=database
        )
        if not records or not records[0]["changed"]:
            return
        log.info(done, records[0]["changed"])


async def _backfill_reach(driver: AsyncDriver, database: str) -> None:
    """Set ``reaches_memory`` on units stored before the writer kept it, a bounded transaction
    at a time (``cypher/migrations/backfill_reach.cypher``); on a store that has none, the cost
    is one label scan."""
    await _repeat_until_none(
        driver,
        database,
        "migrations/backfill_reach",
        "neo4j store: marked %d units stored before reach marks",
    )


async def _backfill_rewrites(driver: AsyncDriver, database: str) -> None:
    """Set ``rewrites_memory`` on operations stored before the writer kept it, a bounded
    transaction per project and batch (``cypher/migrations/unflagged_operations.cypher``, then
    ``cypher/ingest/mark_rewrites.cypher``); on a store that has none, one label scan."""
    while True:
        records, _, _ = await driver.execute_query(
            query("migrations/unflagged_operations"), batch=BACKFILL_BATCH, database_=database
        )
        flagged = 0
        for record in records:
            marked, _, _ = await driver.execute_query(
                query("ingest/mark_rewrites"),
                project=record["project"],
                ops=record["ids"],
                units=[],
                database_=database,
            )
            flagged += marked[0]["flagged"]
        if not flagged:
            return  # none left (or none it can flag: an operation without a project)
        log.info("neo4j store: flagged %d operations stored before rewrite flags", flagged)


async def _backfill_idle(driver: AsyncDriver, database: str) -> None:
    """Set ``idle`` on operations without inputs or outputs stored before the writer kept it, a
    bounded transaction at a time (``cypher/migrations/idle_unmarked.cypher``); on a store that
    has none, the cost is one label scan with two edge checks per operation."""
    await _repeat_until_none(
        driver,
        database,
        "migrations/idle_unmarked",
        "neo4j store: marked %d operations without inputs or outputs stored before idle marks",
    )


async def _drop_stale_attributions(driver: AsyncDriver, database: str) -> None:
    """Delete attributions an earlier version kept after their case's verdict changed (a blame
    of a case set passed since), which the reports counted as attributed failures, a bounded
    transaction at a time (``cypher/migrations/stale_attributions.cypher``)."""
    await _repeat_until_none(
        driver,
        database,
        "migrations/stale_attributions",
        "neo4j store: deleted %d attributions made for an earlier verdict",
    )


async def _backfill_scope_names(driver: AsyncDriver, database: str) -> None:
    """Keep ``conversation_id`` and ``user_id`` as properties on nodes stored before the writer
    did (``graph_schema/scope_names.py``): read once (``cypher/migrations/scope_names_missing``),
    computed here from the attributes JSON, which Cypher cannot read, and set a bounded
    transaction at a time (``cypher/migrations/set_scope_names``)."""
    rows: list[dict[str, str | None]] = []
    async with driver.session(database=database, default_access_mode="READ") as session:
        result = await session.run(query("migrations/scope_names_missing"))
        async for record in result:
            try:
                attributes = json.loads(record["attributes"])
            except (TypeError, ValueError):
                continue
            names_ = scope_names(attributes if isinstance(attributes, dict) else None)
            if any(names_.values()):
                rows.append({"node": record["node"], **names_})
    for start in range(0, len(rows), BACKFILL_BATCH):
        await driver.execute_query(
            query("migrations/set_scope_names"),
            rows=rows[start : start + BACKFILL_BATCH],
            database_=database,
        )
    if rows:
        log.info("neo4j store: kept the scope names of %d nodes stored before", len(rows))
