"""Running attribution jobs: every service process runs ``job_pool`` takers, which take chunks
of any running job from the store, attribute them and store them, so N processes (uvicorn
workers, replicas on other machines, one Neo4j) share one job.

A job's cases are split into chunks when it is created (``repository``): each a
``(:JobChunk)`` with a lease. A taker takes a free or lease-expired chunk by compare-and-set in
one write transaction, reads its pending cases in one read transaction, attributes them
(``CASES_IN_FLIGHT`` cases of a job at a time over the process's takers, so the reads and LLM
calls of some overlap the walks of others), then stores the results, the cases' states and the
chunk's done mark in one write transaction, which completes the job when it finished the last
chunk. The process that created or resumed a job is told its id and takes its chunks at once;
the others join after a head start (``job_poll_s`` twice), which keeps a small job on one
process and its caches, and spreads a large one over all.

Takers run as tasks on the process's job thread, with its own event loop and driver, and the
leases are renewed from a heartbeat thread beside it, with a loop and driver of its own too.
Why a thread of its own: a job reads and decodes thousands of subgraphs and walks them in
Python. On the request loop that would hold up every other request for as long as the job runs;
on its own thread the request loop keeps answering (it shares the interpreter, so it gets slower,
not stuck). An async Neo4j driver and an HTTP client belong to the event loop that made them, so
the worker makes its own drivers (one per store; a job runs on the store of its project,
``service.placement``; the request drivers are still the one made in the lifespan) and its own
embedder.

Why the heartbeat has a thread of its own rather than a task on the worker's loop: a walk is
CPU-bound Python between its awaits, and the worker's loop runs every taker of the process, so
a renewal task there waited behind whole stretches of walks and a busy process lost its leases
(and its jobs flapped to ``interrupted``). Moving the walks off the loop instead was the other
choice, but a walk is a coroutine that interleaves CPU stretches with Neo4j reads and LLM
calls; it cannot be handed to a thread pool without a loop of its own per walk, and the GIL
would still be shared. The heartbeat is small, so it is the part that moves: on its thread it
needs the GIL only for a few milliseconds per beat, which the interpreter's switch interval
(5 ms) grants it however busy the worker is. Every ``job_heartbeat_s`` it renews the leases of
the chunks the takers hold (``job_lease_s`` from then, by Neo4j's clock) and the heartbeats of
their jobs.

A renewal vouches for progress, not for a thread: a taker marks the time it last moved on (its
chunk read, a case finished, a try at an unreachable store), and the heartbeat stops renewing
the chunk of a taker that has not moved for ``job_stall_s`` and cancels its work. A taker stuck
on an await that never returns (an LLM call without end, a deadlock) then loses its chunk like
a dead process does: the lease expires and any process takes the chunk.

When Neo4j goes away under a taker, it tries its chunk again, backing off from
``STORE_BACKOFF_S[0]`` to ``STORE_BACKOFF_S[-1]`` seconds between tries, for at most
``job_store_wait_s``; then it lets the chunk go (its lease expires) and looks for work again,
backing off the same way. What was stored stays stored; a chunk read again finds only its
cases still pending.

When a process dies (kill -9, a crash, a machine gone), its takers' leases are no longer
renewed; after ``job_lease_s`` any process's taker takes their chunks, without a person. The
job shows as ``interrupted`` while no process is heard of on it for ``job_stale_s``; a resume
(``POST /attribution-jobs/{id}/resume``) frees its chunks at once instead of waiting for the
leases. A stopped job's chunks are not taken until it is resumed.

Jobs written before jobs had chunks (a ``running`` one has no runner after the upgrade, since
every process restarted) are given chunks when a process's takers start
(``_chunk_old_jobs``), not when a person resumes them: the promise is now that a job no process
holds is taken over without a person, and start-up is the first moment a process of the new
version can keep it. A stopped old job is given chunks by its resume. Both go through
``attribution_jobs/chunk_job``, which locks the job and makes chunks only once, so processes
starting together do not race.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

from neo4j import AsyncDriver, AsyncSession

from service.attribution import repository as attributions
from service.attribution.jobs import repository as jobs
from service.attribution.jobs.repository import CaseOutcome, ChunkKey, PendingCase, Taken
from service.attribution.judge_check.models import JudgeCheckResult
from service.attribution.judges.base import Judge
from service.attribution.models import AttributeRequest
from service.attribution.row_cache import RowCache
from service.attribution.scope_reads import ScopeReads
from service.attribution.search import EndpointEmbedder
from service.attribution.service import (
    RepositorySource,
    attribute_inputs,
    build_judge,
    check_case,
    close_judge,
    new_embedder,
    recorded_check,
)
from service.db import Store, Stores
from service.errors import MemTraceError, StoreUnavailable
from service.settings import Settings

log = logging.getLogger(__name__)

CHUNK = 16
"""Cases per chunk: one take, one read and one write transaction each. Large enough that
transaction overhead is small, small enough that a stop takes effect soon, a dead process loses
little, and a job of a few hundred cases spreads over several processes."""
CASES_IN_FLIGHT = 8
"""Cases of one job walked at once in a process, over all its takers (their evidence reads and
LLM calls overlap)."""
LOOK = 8
"""A take locks the oldest ``LOOK`` free chunks (at least as many as the process has takers) and
takes the first still free, so takers polling at once each take one: the second waits for the
first's commit instead of coming back empty."""
JOBS_KEPT = 4
"""Jobs whose shared caches (``_Shared``) a process keeps; the oldest is dropped past that."""
STORE_BACKOFF_S = (0.5, 1.0, 2.0, 4.0, 8.0)
"""Pauses between tries while Neo4j is unreachable, the last one repeated: soon at first (a
blip), then not hammering a store that restarts."""

PROCESS = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
"""This process's name in a lease's holder (``PROCESS/taker``)."""


def head_start_ms(settings: Settings) -> int:
    """How long the process that created or resumed a job has its chunks to itself."""
    return int(2 * settings.job_poll_s * 1000)


def judges_here(settings: Settings) -> tuple[str, ...]:
    """The judges this process can run: an llm judge needs an LLM endpoint. A process takes
    chunks of other processes' jobs only when it can run their judge (replicas configured
    differently would otherwise fail each other's jobs)."""
    return ("heuristic", "llm", "llm-all") if settings.llm_base_url else ("heuristic",)


def lease_ms(settings: Settings) -> int:
    return int(settings.job_lease_s * 1000)


def attribute_request(judge: str, refresh: bool, max_llm_calls: int | None) -> AttributeRequest:
    return AttributeRequest.model_validate(
        {"judge": judge, "refresh": refresh, "max_llm_calls": max_llm_calls}
    )


@dataclass(frozen=True)
class JobSpec:
    """What attributing a chunk needs to know about its job."""

    project: str
    job_id: str
    request: AttributeRequest


@dataclass
class _Taker:
    """One taker's state shared with the heartbeat, across their threads (each field is
    assigned whole, which the GIL makes atomic)."""

    holder: str
    chunk: ChunkKey | None = None
    """The chunk it works on, whose lease the heartbeat renews."""
    work: asyncio.Task[None] | None = None
    """Its work on that chunk, which the heartbeat cancels when it stalls."""
    progress_at: float = field(default_factory=time.monotonic)
    stalled: bool = False

    def moved(self) -> None:
        """The taker moved on: read its chunk, finished a case, tried an unreachable store."""
        self.progress_at = time.monotonic()

    def still_s(self) -> float:
        """Seconds since the taker last moved on."""
        return time.monotonic() - self.progress_at


class _LoopThread:
    """A daemon thread running an event loop of its own, with Neo4j drivers made on it (an
    async driver belongs to the loop that made it)."""

    def __init__(self, settings: Settings, name: str) -> None:
        self._settings = settings
        self._loop = asyncio.new_event_loop()
        self._stores: Stores | None = None
        self._thread = threading.Thread(target=self._serve, name=name, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.run_forever()

    def _stores_here(self) -> Stores:
        """This thread's drivers, made on first use (called on this thread's loop)."""
        if self._stores is None:
            self._stores = Stores(self._settings)
        return self._stores


class _Heartbeat(_LoopThread):
    """The process's heartbeat thread: renews the leases of the chunks its takers hold, and
    cancels the work of a taker that has not moved on for ``job_stall_s``."""

    def __init__(
        self, settings: Settings, takers: list[_Taker], worker_loop: asyncio.AbstractEventLoop
    ) -> None:
        super().__init__(settings, "attribution-job-heartbeat")
        self._takers = takers
        self._worker_loop = worker_loop

    def start(self) -> concurrent.futures.Future[None]:
        return asyncio.run_coroutine_threadsafe(self._beat(), self._loop)

    async def _beat(self) -> None:
        while True:
            await asyncio.sleep(self._settings.job_heartbeat_s)
            try:
                await self._renew()
            except Exception as e:  # the heartbeat never dies: a dead one loses every lease
                log.error("attribution job heartbeat failed", exc_info=e)

    async def _renew(self) -> None:
        settings = self._settings
        held: dict[str, tuple[Store, dict[ChunkKey, str]]] = {}  # by store name
        for taker in self._takers:
            chunk, work = taker.chunk, taker.work
            if chunk is None:
                continue
            if taker.still_s() > settings.job_stall_s:
                if not taker.stalled:
                    log.warning(
                        "attribution job %s: a taker has not moved on for %g s; its chunk %d "
                        "is cancelled and taken by any process once its lease expires",
                        chunk.job_id,
                        settings.job_stall_s,
                        chunk.seq,
                    )
                    taker.stalled = True
                    if work is not None:
                        self._worker_loop.call_soon_threadsafe(work.cancel)
                continue
            store = self._stores_here().for_project(chunk.project)
            held.setdefault(store.name, (store, {}))[1][chunk] = taker.holder
        for store, chunks in held.values():
            try:
                async with store.driver.session(database=store.database) as session:
                    kept = await jobs.renew(session, chunks, lease_ms(settings))
            except StoreUnavailable:
                continue  # the takers see it too
            for lost in set(chunks) - kept:
                log.info(
                    "attribution job %s: chunk %d is no longer this process's (done, stopped "
                    "or taken over)",
                    lost.job_id,
                    lost.seq,
                )


class JobWorker(_LoopThread):
    """The process's job thread: ``job_pool`` takers on its loop, their leases renewed from the
    heartbeat thread. ``start`` and ``nudge`` from any thread."""

    def __init__(self, settings: Settings) -> None:
        super().__init__(settings, "attribution-jobs")
        self._takers = [_Taker(f"{PROCESS}/{i}") for i in range(settings.job_pool)]
        self._look = max(LOOK, settings.job_pool)
        self._hints: dict[tuple[str, str], None] = {}
        """Jobs this process created or resumed, whose chunks it takes first (ordered)."""
        self._wake: asyncio.Event | None = None
        self._shared: dict[tuple[str, str], _Shared] = {}
        self._started = False

    def start(self) -> None:
        """Start the takers and the heartbeat (once)."""
        if self._started:
            return
        self._started = True
        asyncio.run_coroutine_threadsafe(self._chunk_old_jobs(), self._loop)
        for taker in self._takers:
            asyncio.run_coroutine_threadsafe(self._take_loop(taker), self._loop)
        _Heartbeat(self._settings, self._takers, self._loop).start()

    def nudge(self, project: str, job_id: str) -> None:
        """Have this process's takers take the job's chunks now (it created or resumed it)."""
        self._loop.call_soon_threadsafe(self._hint, (project, job_id))

    def _hint(self, job: tuple[str, str]) -> None:
        self._hints[job] = None
        self._wake_event().set()

    def _wake_event(self) -> asyncio.Event:
        if self._wake is None:
            self._wake = asyncio.Event()
        return self._wake

    async def _chunk_old_jobs(self) -> None:
        """Give chunks to running jobs written before jobs had them, on every store, trying a
        store that does not answer again until it does (see the module's docstring)."""
        for store in self._stores_here().all():
            tries = 0
            while True:
                try:
                    async with store.driver.session(database=store.database) as session:
                        for project, job_id in await jobs.unchunked_jobs(session):
                            if await jobs.chunk_job(session, project, job_id, CHUNK):
                                log.info("attribution job %s: given chunks", job_id)
                    break
                except StoreUnavailable:
                    await asyncio.sleep(STORE_BACKOFF_S[min(tries, len(STORE_BACKOFF_S) - 1)])
                    tries += 1
                except Exception as e:  # never dies silently; the next start tries again
                    log.error("chunking old attribution jobs failed", exc_info=e)
                    break

    async def _take(self, taker: _Taker) -> tuple[Store, Taken] | None:
        """A chunk for ``taker``: of a job this process was told of first, else of any job."""
        stores = self._stores_here()
        for job in list(self._hints):
            store = stores.for_project(job[0])
            async with store.driver.session(database=store.database) as session:
                taken = await jobs.take_chunk(
                    session, taker.holder, lease_ms(self._settings), job, self._look
                )
            if taken is not None:
                return store, taken
            self._hints.pop(job, None)  # nothing left to take first
        for store in stores.all():
            async with store.driver.session(database=store.database) as session:
                taken = await jobs.take_chunk(
                    session,
                    taker.holder,
                    lease_ms(self._settings),
                    None,
                    self._look,
                    judges_here(self._settings),
                )
            if taken is not None:
                return store, taken
        return None

    async def _take_loop(self, taker: _Taker) -> None:
        settings = self._settings
        tries = 0
        while True:
            try:
                got = await self._take(taker)
                tries = 0
            except StoreUnavailable:
                await asyncio.sleep(STORE_BACKOFF_S[min(tries, len(STORE_BACKOFF_S) - 1)])
                tries += 1
                continue
            except Exception as e:  # a taker never dies silently, nor for good
                log.error("attribution job taker: taking a chunk failed", exc_info=e)
                await asyncio.sleep(settings.job_poll_s)
                continue
            wake = self._wake_event()
            if got is None:
                # Idle, only the first taker polls (every job_poll_s); the others wait until a
                # take succeeds or a job is nudged, so an idle process costs Neo4j one small
                # write a poll, not one per taker.
                poll = settings.job_poll_s if taker is self._takers[0] else None
                wake.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(wake.wait(), poll)
                continue
            wake.set()  # there is work: the idle takers look too
            store, taken = got
            taker.moved()
            taker.stalled = False
            taker.chunk = taken.chunk
            work = asyncio.create_task(self._work_on(taker, store, taken))
            taker.work = work
            try:
                await work
            except asyncio.CancelledError:
                if not work.cancelled():
                    raise  # the taker itself is cancelled (the process ends)
            except Exception as e:
                log.error("attribution job %s: taker crashed", taken.chunk.job_id, exc_info=e)
            finally:
                taker.chunk = taker.work = None

    async def _work_on(self, taker: _Taker, store: Store, taken: Taken) -> None:
        key = (taken.chunk.project, taken.chunk.job_id)
        spec = JobSpec(*key, attribute_request(taken.judge, taken.refresh, taken.max_llm_calls))
        shared = self._shared.get(key)
        if shared is None:
            shared = new_shared(store.driver, store.database, self._settings, spec.request)
            self._shared[key] = shared
            while len(self._shared) > JOBS_KEPT:
                self._shared.pop(next(iter(self._shared)))
        status = await do_chunk(shared, spec, taken.chunk, taker)
        if status in ("completed", "failed"):
            self._shared.pop(key, None)


_worker: JobWorker | None = None
_worker_lock = threading.Lock()


def worker(settings: Settings) -> JobWorker:
    """The process's job worker, made on first use with the settings of the app that asks
    first (a process serves one app); its takers start with ``start`` (the lifespan)."""
    global _worker
    with _worker_lock:
        if _worker is None:
            _worker = JobWorker(settings)
        return _worker


def nudge(project: str, job_id: str) -> None:
    """Tell this process's takers, if it runs any, to take the job's chunks first."""
    if _worker is not None and _worker._started:
        _worker.nudge(project, job_id)


async def run_job(store: Store, settings: Settings, project: str, job_id: str) -> None:
    """Take and attribute the job's chunks on the calling loop until none is left to take
    (benchmarks: the same code a taker runs, without the job thread or lease renewal)."""
    taker = _Taker(f"{PROCESS}/inline")
    shared: _Shared | None = None
    while True:
        async with store.driver.session(database=store.database) as session:
            taken = await jobs.take_chunk(
                session, taker.holder, lease_ms(settings), (project, job_id), LOOK
            )
        if taken is None:
            return
        spec = JobSpec(
            project, job_id, attribute_request(taken.judge, taken.refresh, taken.max_llm_calls)
        )
        if shared is None:
            shared = new_shared(store.driver, store.database, settings, spec.request)
        await do_chunk(shared, spec, taken.chunk, taker)


async def do_chunk(shared: _Shared, spec: JobSpec, chunk: ChunkKey, taker: _Taker) -> str | None:
    """Read the chunk's pending cases, attribute them and store them with the chunk's done
    mark; the job's status afterwards, or None when the chunk was let go (Neo4j unreachable
    for ``job_store_wait_s``). An unexpected error fails the job."""
    settings = shared.settings
    outage = _Outage(settings.job_store_wait_s)
    while True:
        try:
            async with shared.driver.session(database=shared.database) as session:
                if not shared.check_read:
                    shared.judge_check = await recorded_check(
                        session, spec.project, spec.request, settings
                    )
                    shared.check_read = True
                pending = await jobs.chunk_cases(session, chunk)
                taker.moved()
                outcomes = await attribute_batch(session, shared, spec, pending, taker.moved)
                status = await jobs.record_chunk(session, chunk, taker.holder, outcomes)
            if status == "completed":
                log.info("attribution job %s completed", spec.job_id)
            return status
        except StoreUnavailable:
            pause = outage.next_pause()
            if pause is None:
                log.warning(
                    "attribution job %s: neo4j unreachable for %g s; chunk %d is let go (any "
                    "process takes it once its lease expires)",
                    spec.job_id,
                    settings.job_store_wait_s,
                    chunk.seq,
                )
                return None
            await asyncio.sleep(pause)
            taker.moved()
        except Exception as e:
            name = type(e).__name__
            log.error("attribution job %s failed: %s", spec.job_id, name, exc_info=e)
            error = f"unexpected {name}; see the service log"
            async with shared.driver.session(database=shared.database) as session:
                await jobs.fail(session, spec.project, spec.job_id, error)
            return "failed"


def new_shared(
    driver: AsyncDriver, database: str, settings: Settings, request: AttributeRequest
) -> _Shared:
    """What the cases of one job share in this process."""
    limit = settings.attribution_graph_limit
    shared = _Shared(driver, database, settings, new_embedder(settings), ScopeReads(limit))
    if request.judge != "heuristic":
        # A case waiting for an LLM slot would count the wait in its seconds: no more cases in
        # flight than the endpoint takes requests (settings.llm_concurrency).
        shared.in_flight = asyncio.Semaphore(min(CASES_IN_FLIGHT, settings.llm_concurrency))
    return shared


@dataclass
class _Shared:
    """What every case of a job shares in a process: the driver (a session per case in flight),
    the embedder, the scopes' messages read so far (``attribution_scope.ScopeReads``: a
    conversation's messages are read once, not once per case), the nodes read so far, decoded
    (``row_cache.RowCache``: where every retrieval consumes the whole store, a
    conversation's cases share almost all of their graphs) and the bound on cases in flight.
    (The engine keeps one search index per case scope in the process, so a job's cases of one
    conversation search it once.)"""

    driver: AsyncDriver
    database: str  # of the job's project's store
    settings: Settings
    embedder: EndpointEmbedder | None
    scope_reads: ScopeReads
    rows: RowCache = field(default_factory=RowCache)
    in_flight: asyncio.Semaphore = field(default_factory=lambda: asyncio.Semaphore(CASES_IN_FLIGHT))
    judge_check: JudgeCheckResult | None = None
    """The project's recorded judge check of the configured model (read once per job)."""
    check_read: bool = False


class _Outage:
    """When to try an unreachable store again: ``next_pause`` after each failure gives the
    pause before the next try, or None once ``wait_s`` has passed since the first failure."""

    def __init__(self, wait_s: float) -> None:
        self._wait_s = wait_s
        self._since: float | None = None
        self._tries = 0

    def next_pause(self) -> float | None:
        now = time.monotonic()
        if self._since is None:
            self._since = now
        left = self._wait_s - (now - self._since)
        if left <= 0:
            return None
        pause = STORE_BACKOFF_S[min(self._tries, len(STORE_BACKOFF_S) - 1)]
        self._tries += 1
        return min(pause, left)


async def attribute_batch(
    session: AsyncSession,
    shared: _Shared,
    spec: JobSpec,
    pending: list[PendingCase],
    moved: Callable[[], None] = lambda: None,
) -> list[CaseOutcome]:
    """The outcome of each pending case: skipped (a stored attribution, and no refresh), failed
    (it cannot be attributed: no answer unit, gone), or attributed with its result. ``moved``
    is called as each case finishes (the taker's progress)."""
    refresh = spec.request.refresh
    outcomes = [CaseOutcome(p.case_id, "skipped") for p in pending if p.attributed and not refresh]
    todo = [p.case_id for p in pending if refresh or not p.attributed]
    if not todo:
        return outcomes
    settings = shared.settings
    limit = settings.attribution_graph_limit
    chunk = await attributions.chunk_graphs(session, spec.project, todo, limit, shared.rows)
    inputs = chunk.cases

    async def one(case_id: str) -> CaseOutcome:
        async with shared.in_flight:
            judge: Judge | None = None
            try:
                check_case(spec.project, case_id, inputs[case_id].case)
                if settings.job_case_spin_s:
                    _spin(settings.job_case_spin_s)
                judge = build_judge(spec.request, settings, shared.judge_check)
                async with shared.driver.session(database=shared.database) as own:
                    source = RepositorySource(
                        own,
                        spec.project,
                        limit,
                        shared.embedder,
                        shared.scope_reads,
                        shared.rows,
                        chunk.descent,
                    )
                    result = await attribute_inputs(inputs[case_id], judge, source)
            except StoreUnavailable:
                raise
            except MemTraceError as e:
                outcome = CaseOutcome(case_id, "failed", message=e.message)
            except Exception as e:
                log.warning("attribution job %s: case failed: %s", spec.job_id, type(e).__name__)
                outcome = CaseOutcome(case_id, "failed", message=f"unexpected {type(e).__name__}")
            else:
                outcome = CaseOutcome(case_id, result.status, result=result)
            finally:
                if judge is not None:
                    await close_judge(judge)
            moved()
            return outcome

    return outcomes + list(await asyncio.gather(*(one(c) for c in todo)))


def _spin(seconds: float) -> None:
    """Burn CPU on the calling thread without yielding its loop (``job_case_spin_s``, tests
    only): a stand-in for a long walk."""
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        pass
