"""Running attribution jobs: one worker thread per process, with its own event loop and driver,
and one heartbeat thread beside it, with a loop and driver of its own too.

Why a thread of its own: a job reads and decodes thousands of subgraphs and walks them in
Python. On the request loop that would hold up every other request for as long as the job runs;
on its own thread the request loop keeps answering (it shares the interpreter, so it gets slower,
not stuck). An async Neo4j driver and an HTTP client belong to the event loop that made them, so
the worker makes its own drivers (one per store, on the first job; a job runs on the store of its
project, ``service.placement``; the request drivers are still
the one made in the lifespan) and its own embedder.

A runner works through its job's pending cases in id order, in chunks: ``CHUNK_WORKERS`` chunks
at a time, each read in one read transaction, attributed (``CASES_IN_FLIGHT`` cases at a time
over all chunks, so the reads and LLM calls of some overlap the walks of others), then stored
and marked done in one write transaction.

Why the heartbeat has a thread of its own rather than a task on the worker's loop: a walk is
CPU-bound Python between its awaits, and the worker's loop runs every runner of the process,
so a heartbeat task there waited behind whole stretches of walks; with ten jobs at once it
missed ``job_stale_s`` and its job flapped between ``running`` and ``interrupted`` (and a
resume in such a gap started a second runner). Moving the walks off the loop instead was the
other choice, but a walk is a coroutine that interleaves CPU stretches with Neo4j reads and LLM
calls; it cannot be handed to a thread pool without a loop of its own per walk, and the GIL
would still be shared. The heartbeat is small, so it is the part that moves: on its thread it
needs the GIL only for a few milliseconds per beat, which the interpreter's switch interval
(5 ms) grants it however busy the worker is. It says every ``job_heartbeat_s`` that the
runner is alive, and learns when the job was stopped or handed to another runner.

A beat vouches for progress, not for a thread: the runner marks the time it last moved on (a
page of pending cases read, a case finished, a chunk stored, a try at an unreachable store),
and a heartbeat whose runner has not moved for ``job_stall_s`` stops beating and cancels the
runner. A runner stuck on an await that never returns (an LLM call without end, a deadlock)
then lets its job age into ``interrupted`` like a dead process does, and a resume gives the job
a new runner, instead of the job sitting ``running`` with a fresh heartbeat and no progress.

When Neo4j goes away under a job, the runner tries again, backing off from
``STORE_BACKOFF_S[0]`` to ``STORE_BACKOFF_S[-1]`` seconds between tries, for at most
``job_store_wait_s`` from the first failure after its last progress. If the store is back in
time, the job goes on by itself (what was stored stays stored; the chunks in flight are read
again, and only cases still pending are counted). If not, the runner ends, its heartbeat with
it, and the job shows as ``interrupted`` once the store answers again; resume it.

When the process stops, its runners stop with it; the job stays ``running`` in Neo4j with a
heartbeat that ages, is shown as ``interrupted`` after ``job_stale_s``, and is resumed by the
user (``POST /attribution-jobs/{id}/resume`` or ``memtrace attribute --resume``). A resume
claims the job only when it is stopped or interrupted, in one locked write
(``attribution_jobs/resume_job``). A restarted service
does not resume jobs by itself: the stop may have been the job's own doing (memory, an LLM
endpoint gone wrong), several service processes would race for the same job, and the user who
restarts a service should decide what it runs.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from neo4j import AsyncDriver, AsyncSession

from service.attribution import repository as attributions
from service.attribution.jobs import repository as jobs
from service.attribution.jobs.repository import CaseOutcome, PendingCase
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
from service.db import Stores
from service.errors import MemTraceError, StoreUnavailable
from service.settings import Settings

log = logging.getLogger(__name__)

CHUNK = 16
"""Cases per chunk: one read and one write transaction each. Large enough that transaction
overhead is small, small enough that a stop takes effect soon and an interruption loses little."""
CHUNK_WORKERS = 4
"""Chunks in work at once: enough that Neo4j's share of a chunk (reads, the write) overlaps the
walks of others."""
CASES_IN_FLIGHT = 8
"""Cases walked at once over all chunks (their evidence reads and LLM calls overlap)."""
PAGE = 1000
"""Pending case ids read at a time."""
STORE_BACKOFF_S = (0.5, 1.0, 2.0, 4.0, 8.0)
"""Pauses between tries while Neo4j is unreachable, the last one repeated until
``job_store_wait_s`` is spent: soon at first (a blip), then not hammering a store that restarts."""


@dataclass(frozen=True)
class JobSpec:
    """What a runner needs to know about its job."""

    project: str
    job_id: str
    runner: str
    request: AttributeRequest


@dataclass
class _Run:
    """One runner's state shared with its heartbeat, across their threads (``owned`` is a
    thread-safe event: cleared by either when the job is no longer the runner's;
    ``progress_at`` is written by the runner and read by the heartbeat, a float whose
    assignment the GIL makes atomic)."""

    spec: JobSpec
    owned: threading.Event = field(default_factory=threading.Event)
    progress_at: float = field(default_factory=time.monotonic)
    """When the runner last moved on (``time.monotonic``)."""
    stored_at: float = field(default_factory=time.monotonic)
    """When the runner last stored a chunk: what ends an outage (``_Outage``)."""

    def moved(self) -> None:
        """The runner moved on: read pending cases, finished a case, tried an unreachable
        store again."""
        self.progress_at = time.monotonic()

    def stored(self) -> None:
        """The runner stored a chunk's results and progress."""
        self.progress_at = self.stored_at = time.monotonic()

    def still_s(self) -> float:
        """Seconds since the runner last moved on."""
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


class _Heartbeats(_LoopThread):
    """The process's heartbeat thread: one beating task per live runner."""

    def __init__(self, settings: Settings) -> None:
        super().__init__(settings, "attribution-job-heartbeats")

    def start(self, run: _Run, give_up: Callable[[], None]) -> concurrent.futures.Future[None]:
        """Beat for ``run`` until the returned future is cancelled, the job is not its own, or
        its runner has not moved on for ``job_stall_s`` (then ``give_up`` is called, from this
        thread, to cancel the runner)."""
        return asyncio.run_coroutine_threadsafe(self._beat(run, give_up), self._loop)

    async def _beat(self, run: _Run, give_up: Callable[[], None]) -> None:
        store = self._stores_here().for_project(run.spec.project)
        await _heartbeat(store.driver, store.database, run, self._settings, give_up)


class JobWorker(_LoopThread):
    """The process's job thread. ``submit`` from any thread; runners run on the worker's loop,
    their heartbeats on the heartbeat thread."""

    def __init__(self, settings: Settings) -> None:
        super().__init__(settings, "attribution-jobs")
        self._heartbeats = _Heartbeats(settings)

    def submit(self, spec: JobSpec) -> None:
        """Start a runner for the job (a resumed job's earlier runner ends at its next step)."""
        asyncio.run_coroutine_threadsafe(self._run(spec), self._loop)

    async def _run(self, spec: JobSpec) -> None:
        run = _Run(spec)
        run.owned.set()
        task = asyncio.current_task()
        assert task is not None  # a coroutine run by run_coroutine_threadsafe is a task

        def give_up() -> None:  # called on the heartbeat thread: cancel on this loop
            self._loop.call_soon_threadsafe(task.cancel)

        beat = self._heartbeats.start(run, give_up)
        try:
            store = self._stores_here().for_project(spec.project)
            await run_job(store.driver, store.database, self._settings, run)
        except Exception as e:  # a runner never dies silently
            log.error("attribution job %s crashed: %s", spec.job_id, type(e).__name__, exc_info=e)
        finally:
            beat.cancel()  # thread-safe: the task is cancelled on the heartbeat loop


_worker: JobWorker | None = None
_worker_lock = threading.Lock()


def worker(settings: Settings) -> JobWorker:
    """The process's job worker, started on first use with the settings of the app that asks
    first (a process serves one app)."""
    global _worker
    with _worker_lock:
        if _worker is None:
            _worker = JobWorker(settings)
        return _worker


async def run_job(driver: AsyncDriver, database: str, settings: Settings, run: _Run) -> None:
    """Attribute the job's pending cases until none is left, the job is stopped or resumed by
    another runner, or Neo4j stays unreachable. Its heartbeat runs elsewhere (the caller's)."""
    await _work(driver, database, settings, run)


@dataclass
class _Shared:
    """What every case of a job's runner shares: the driver (a session per case in flight),
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
    """The project's recorded judge check of the configured model (read once per runner)."""
    run: _Run | None = None
    """The runner's state, whose progress each finished case marks (None: no one watches)."""

    def moved(self) -> None:
        if self.run is not None:
            self.run.moved()


async def _work(driver: AsyncDriver, database: str, settings: Settings, run: _Run) -> None:
    spec = run.spec
    limit = settings.attribution_graph_limit
    shared = _Shared(driver, database, settings, new_embedder(settings), ScopeReads(limit), run=run)
    if spec.request.judge != "heuristic":
        # A case waiting for an LLM slot would count the wait in its seconds: no more cases in
        # flight than the endpoint takes requests (settings.llm_concurrency).
        shared.in_flight = asyncio.Semaphore(min(CASES_IN_FLIGHT, settings.llm_concurrency))
    outage = _Outage(run, settings.job_store_wait_s)
    check_read = False
    async with driver.session(database=database) as session:
        while run.owned.is_set():
            try:
                if not check_read:
                    shared.judge_check = await recorded_check(
                        session, spec.project, spec.request, settings
                    )
                    check_read = True
                if not await jobs.next_cases(session, spec.project, spec.job_id, "", 1):
                    await jobs.finish(session, spec.project, spec.job_id, spec.runner, "completed")
                    log.info("attribution job %s completed", spec.job_id)
                    return
                await _pass(shared, run)
            except StoreUnavailable:
                pause = outage.next_pause()
                if pause is None:
                    log.warning(
                        "attribution job %s: neo4j unreachable for %g s; the runner ends and "
                        "the job shows as interrupted (resume it)",
                        spec.job_id,
                        settings.job_store_wait_s,
                    )
                    return
                await asyncio.sleep(pause)
                run.moved()
            except Exception as e:
                name = type(e).__name__
                log.error("attribution job %s failed: %s", spec.job_id, name, exc_info=e)
                error = f"unexpected {type(e).__name__}; see the service log"
                await jobs.finish(session, spec.project, spec.job_id, spec.runner, "failed", error)
                return
    log.info("attribution job %s: runner %s ends (stopped or resumed)", spec.job_id, spec.runner)


class _Outage:
    """When to try an unreachable store again: ``next_pause`` after each failure gives the
    pause before the next try, or None once ``wait_s`` has passed since the first failure
    after the runner last stored a chunk (a failure after that starts a new outage: a job that
    went on between two blips is not given up for their sum; a store that answers reads but
    fails every write is)."""

    def __init__(self, run: _Run, wait_s: float) -> None:
        self._run = run
        self._wait_s = wait_s
        self._since: float | None = None
        self._tries = 0

    def next_pause(self) -> float | None:
        now = time.monotonic()
        if self._since is None or self._since < self._run.stored_at:
            self._since, self._tries = now, 0  # a new outage
        left = self._wait_s - (now - self._since)
        if left <= 0:
            return None
        pause = STORE_BACKOFF_S[min(self._tries, len(STORE_BACKOFF_S) - 1)]
        self._tries += 1
        return min(pause, left)


async def _pass(shared: _Shared, run: _Run) -> None:
    """One pass over the pending cases, in id order: a reader pages through them and hands
    chunks to ``CHUNK_WORKERS`` workers, each reading its chunk's inputs in one read
    transaction, attributing them, and recording them in one write transaction. While one
    worker waits for Neo4j, the others walk their cases."""
    spec = run.spec
    database = shared.database
    chunks: asyncio.Queue[list[PendingCase] | None] = asyncio.Queue(CHUNK_WORKERS)

    async def read_pending() -> None:
        after = ""
        async with shared.driver.session(database=database) as session:
            while run.owned.is_set():
                page = await jobs.next_cases(session, spec.project, spec.job_id, after, PAGE)
                run.moved()
                for start in range(0, len(page), CHUNK):
                    await chunks.put(page[start : start + CHUNK])
                if len(page) < PAGE:
                    break
                after = page[-1].case_id
        # The workers' end marks only when reading ended well. Not in a `finally`: when a
        # worker fails, every task is cancelled, and a put on the full queue that no cancelled
        # worker reads would wait forever (the runner hung, its heartbeat beating on).
        for _ in range(CHUNK_WORKERS):
            await chunks.put(None)

    async def work_chunks() -> None:
        async with shared.driver.session(database=database) as session:
            while (chunk := await chunks.get()) is not None:
                if not run.owned.is_set():
                    continue  # drain: the job was stopped or taken over
                outcomes = await attribute_batch(session, shared, spec, chunk)
                if not await jobs.record_batch(
                    session, spec.project, spec.job_id, spec.runner, outcomes
                ):
                    run.owned.clear()
                run.stored()

    tasks = [asyncio.create_task(read_pending())]
    tasks += [asyncio.create_task(work_chunks()) for _ in range(CHUNK_WORKERS)]
    try:
        await asyncio.gather(*tasks)
    except BaseException:
        for task in tasks:  # one failed: the others would wait for it forever
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise


async def _heartbeat(
    driver: AsyncDriver,
    database: str,
    run: _Run,
    settings: Settings,
    give_up: Callable[[], None],
) -> None:
    spec = run.spec
    async with driver.session(database=database) as session:
        while run.owned.is_set():
            await asyncio.sleep(settings.job_heartbeat_s)
            if run.still_s() > settings.job_stall_s:
                log.warning(
                    "attribution job %s: its runner has not moved on for %g s; it is cancelled "
                    "and the job shows as interrupted (resume it)",
                    spec.job_id,
                    settings.job_stall_s,
                )
                run.owned.clear()
                give_up()
                return
            try:
                if not await jobs.heartbeat(session, spec.project, spec.job_id, spec.runner):
                    run.owned.clear()
            except StoreUnavailable:
                pass  # the runner sees it too and decides


async def attribute_batch(
    session: AsyncSession, shared: _Shared, spec: JobSpec, pending: list[PendingCase]
) -> list[CaseOutcome]:
    """The outcome of each pending case: skipped (a stored attribution, and no refresh), failed
    (it cannot be attributed: no answer unit, gone), or attributed with its result."""
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
            shared.moved()
            return outcome

    return outcomes + list(await asyncio.gather(*(one(c) for c in todo)))


def _spin(seconds: float) -> None:
    """Burn CPU on the calling thread without yielding its loop (``job_case_spin_s``, tests
    only): a stand-in for a long walk."""
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        pass
