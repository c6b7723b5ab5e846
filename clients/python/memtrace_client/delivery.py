"""Background delivery: batch what the tracer records, send it, and never lose it.

Records (units, operations, cases) go into a bounded in-memory queue. One worker thread groups
them into batches, closing a batch at ``max_items`` records, ``max_bytes`` of JSON, or
``flush_interval_s`` after its first record, and sends it with one attempt. When the service does
not take it (down, 429, 5xx), the batch goes to the spool and every later batch queues behind it,
so batches always reach the service in the order they were recorded. The worker retries the
oldest spooled batch with exponential backoff and drains the spool in order once the service
answers again.

A refusal (a 4xx other than 429) is final for what it names: when the service names particular
records (a 409 for ids that already mean something else, a 422 for invalid items), those are
kept aside in ``spool_dir/rejected/`` with the reason and the rest of the batch is sent again
(``memtrace_client.refusals``); a refusal of the batch as a whole keeps all of it aside.
``flush()`` reports what was refused since the previous flush.

Exactly once: ids are fixed when a record is made and the service treats an identical re-send as
already there, so a batch sent twice (its response lost, or a process restarted between send
and delete) is stored once.

With a disk spool (``spool_dir``), batches survive the process: ``close()`` (run at exit)
spools whatever it could not send, and the next process with the same ``spool_dir`` replays it
first. Records still in memory when a process is killed with SIGKILL are lost; everything
already spooled is not. Without a disk spool the waiting batches are kept in memory, and what
is still waiting when the delivery closes is dropped with a warning that counts it.
"""

from __future__ import annotations

import atexit
import json
import logging
import queue
import threading
import time
import weakref
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from memtrace_client.client import MemTraceClient
from memtrace_client.errors import RejectedBatch
from memtrace_client.refusals import record_count, split_refused
from memtrace_client.retry import Backoff
from memtrace_client.spool import Spool

log = logging.getLogger("memtrace_client")

Part = Literal["units", "operations", "cases"]
_POLL_S = 0.05
_REPLAY_PER_ROUND = 20


@dataclass
class DeliveryStats:
    """Counters for monitoring. ``dropped_records`` counts records lost for good: queued while
    the queue stayed full for longer than ``enqueue_timeout_s`` (the worker could not even
    spool), or still waiting in memory when a delivery without a ``spool_dir`` closed."""

    sent_batches: int = 0
    sent_records: int = 0
    spooled_batches: int = 0
    rejected_batches: int = 0
    rejected_records: int = 0
    dropped_records: int = 0


@dataclass(frozen=True)
class Rejection:
    """Records the service refused for good, and its reason (``HTTP <status>: <error body>``)."""

    records: dict[str, Any]
    reason: str


@dataclass(frozen=True)
class FlushResult:
    """What ``flush()`` found. True only when everything recorded reached the service: nothing
    is waiting (``settled``) and nothing was refused since the previous flush (``rejected``)."""

    settled: bool
    rejected: tuple[Rejection, ...] = ()

    def __bool__(self) -> bool:
        return self.settled and not self.rejected


class _MemorySpool:
    """The spool's interface over a deque, for clients configured without a spool directory."""

    def __init__(self) -> None:
        self._batches: deque[dict[str, Any]] = deque()

    def __len__(self) -> int:
        return len(self._batches)

    def append(self, batch: dict[str, Any]) -> None:
        self._batches.append(batch)

    def oldest(self) -> tuple[Any, dict[str, Any]] | None:
        return (0, self._batches[0]) if self._batches else None

    def batches(self) -> list[dict[str, Any]]:
        return list(self._batches)

    def remove(self, _: Any) -> None:
        self._batches.popleft()

    def keep_rejected(self, batch: dict[str, Any], reason: str) -> None:
        log.error("memtrace: refused records were discarded (no spool directory to keep them)")

    def close(self) -> None:
        pass


class Delivery:
    """The queue, the worker thread and the spool behind a ``Tracer``."""

    def __init__(
        self,
        client: MemTraceClient,
        *,
        spool_dir: Path | str | None = None,
        max_items: int = 500,
        max_bytes: int = 2_000_000,
        flush_interval_s: float = 1.0,
        max_queue: int = 10_000,
        enqueue_timeout_s: float = 10.0,
        backoff: Backoff | None = None,
    ) -> None:
        self.client = client
        self.max_items = max_items
        self.max_bytes = max_bytes
        self.flush_interval_s = flush_interval_s
        self.enqueue_timeout_s = enqueue_timeout_s
        self.backoff = backoff or Backoff(base_s=0.5, max_s=30.0)
        self.stats = DeliveryStats()
        self._queue: queue.Queue[tuple[Part, dict[str, Any], int]] = queue.Queue(max_queue)
        self._spool: Spool | _MemorySpool = Spool(spool_dir) if spool_dir else _MemorySpool()
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._closed = False
        self._failures = 0
        self._next_attempt = 0.0
        self._rejections: list[Rejection] = []  # since the last flush; under self._lock
        self._thread = threading.Thread(target=self._run, name="memtrace-delivery", daemon=True)
        self._thread.start()
        _at_exit.add(self)

    # -- producer side ---------------------------------------------------------------------------

    def put(self, part: Part, record: dict[str, Any]) -> None:
        """Queue one record (a JSON-ready unit, operation or case). Blocks only when the queue
        is full, at most ``enqueue_timeout_s``; a record still not queued then is dropped and
        counted in ``stats.dropped_records`` with a warning."""
        if self._closed:
            raise RuntimeError("this tracer's delivery is closed")
        size = len(json.dumps(record, separators=(",", ":"), default=str))
        try:
            self._queue.put((part, record, size), timeout=self.enqueue_timeout_s)
        except queue.Full:
            self.stats.dropped_records += 1
            log.warning(
                "memtrace: queue full for %.0f s; one %s record dropped",
                self.enqueue_timeout_s,
                part[:-1],
            )

    @property
    def pending_batches(self) -> int:
        """Batches waiting in the spool for the service."""
        return len(self._spool)

    def flush(self, timeout_s: float | None = 30.0) -> FlushResult:
        """Send everything recorded so far now; wait until it is settled or ``timeout_s`` passes.

        The result is true when every record reached the service. Otherwise ``settled`` is
        False while some records are still waiting (in the spool, if there is one: they are not
        lost), and ``rejected`` lists what the service refused since the previous flush.
        """
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        with self._idle:
            self._next_attempt = 0.0  # a flush overrides the backoff once
            self._wake.set()
            settled = True
            while not self._settled():
                remaining = None if deadline is None else deadline - time.monotonic()
                if (remaining is not None and remaining <= 0) or not self._thread.is_alive():
                    settled = False
                    break
                self._idle.wait(timeout=min(remaining or 0.2, 0.2))
            rejected, self._rejections = tuple(self._rejections), []
            return FlushResult(settled, rejected)

    def _settled(self) -> bool:
        return self._queue.unfinished_tasks == 0 and len(self._spool) == 0

    def close(self, timeout_s: float = 5.0) -> FlushResult:
        """Flush, stop the worker, and spool what could not be sent. Safe to call twice."""
        if self._closed:
            return FlushResult(self._settled())
        self._closed = True
        delivered = self.flush(timeout_s)
        self._stop.set()
        self._wake.set()
        self._thread.join(timeout=max(1.0, timeout_s))
        if not self._thread.is_alive():
            self._spill_queue()
        self._warn_if_dropped()
        self._spool.close()
        _at_exit.discard(self)
        return delivered

    def _warn_if_dropped(self) -> None:
        """Without a disk spool, what is still waiting when the delivery closes dies with the
        process: say so once, at warning level, with counts only (never the records' content,
        which is the user's data), and how to keep them next time."""
        if not isinstance(self._spool, _MemorySpool) or not len(self._spool):
            return
        batches = len(self._spool)
        records = sum(record_count(batch) for batch in self._spool.batches())
        self.stats.dropped_records += records
        log.warning(
            "memtrace: %d record(s) in %d batch(es) were not delivered to %s and are dropped: "
            "they were kept in memory only; give the Tracer a spool_dir to keep them on disk "
            "until the service answers again",
            records,
            batches,
            self.client.base_url,
        )

    # -- worker side -----------------------------------------------------------------------------

    def _run(self) -> None:
        while True:
            try:
                records = self._collect()
                if records:
                    self._deliver(records)
                self._replay()
            except Exception:  # the worker must not die: log and go on
                log.exception("memtrace: delivery worker error")
                time.sleep(_POLL_S)
            with self._idle:
                if self._queue.empty():  # a flush's records are all batched
                    self._wake.clear()
                self._idle.notify_all()
            if self._stop.is_set() and self._queue.empty():
                return

    def _collect(self) -> list[tuple[Part, dict[str, Any], int]]:
        records: list[tuple[Part, dict[str, Any], int]] = []
        size = 0
        deadline = time.monotonic() + self.flush_interval_s
        while len(records) < self.max_items and size < self.max_bytes:
            try:
                record = self._queue.get(timeout=_POLL_S)
            except queue.Empty:
                urgent = self._wake.is_set() or self._stop.is_set()
                if urgent or time.monotonic() >= deadline:
                    break
                if not records and self._replay_due():
                    break  # nothing new: go on draining the spool instead of idling
                continue
            if not records:
                deadline = time.monotonic() + self.flush_interval_s
            records.append(record)
            size += record[2]
        return records

    def _replay_due(self) -> bool:
        return len(self._spool) > 0 and time.monotonic() >= self._next_attempt

    def _deliver(self, records: list[tuple[Part, dict[str, Any], int]]) -> None:
        batch: dict[str, Any] = {"project": self.client.project}
        for part, record, _ in records:
            batch.setdefault(part, []).append(record)
        try:
            if len(self._spool) or self._stop.is_set():
                self._park(batch)  # behind what is waiting: order is kept
                return
            outcome, refused = self._send(batch)
            if outcome == "retry":
                self._park(batch)
            else:
                self._keep_refused(refused)
        finally:
            for _ in records:
                self._queue.task_done()

    def _send(self, batch: dict[str, Any]) -> tuple[Literal["done", "retry"], list[Rejection]]:
        """Attempt to store ``batch``: ``retry`` when the service could not take it now, else
        ``done``, with what it refused for good (a refusal naming some records sends the rest
        again at once)."""
        refused: list[Rejection] = []
        while True:
            try:
                self.client.send_json(batch, attempts=1)
            except RejectedBatch as e:
                reason = f"HTTP {e.status}: {json.dumps(e.body)[:4000]}"
                split = split_refused(batch, e.status, e.body)
                code = e.body.get("error") if isinstance(e.body, dict) else None
                log.error("memtrace: service refused records: HTTP %s %s", e.status, code or "")
                if split is None:
                    return "done", [*refused, Rejection(batch, reason)]
                batch, named = split
                refused.append(Rejection(named, reason))
                continue  # the rest is smaller each time: this ends
            except Exception as e:  # connection errors, timeouts, 429, 5xx: all worth retrying
                self._failures += 1
                self._next_attempt = time.monotonic() + self.backoff.delay(self._failures - 1)
                log.warning("memtrace: service unavailable (%s); spooling", type(e).__name__)
                return "retry", []
            self._failures = 0
            self.stats.sent_batches += 1
            self.stats.sent_records += record_count(batch)
            return "done", refused

    def _keep_refused(self, refused: list[Rejection]) -> None:
        for rejection in refused:
            self._spool.keep_rejected(rejection.records, rejection.reason)
            self.stats.rejected_batches += 1
            self.stats.rejected_records += record_count(rejection.records)
        if refused:
            with self._lock:
                self._rejections.extend(refused)

    def _park(self, batch: dict[str, Any]) -> None:
        self._spool.append(batch)
        self.stats.spooled_batches += 1

    def _replay(self) -> None:
        """Send spooled batches oldest first; stop at the first that cannot be sent yet."""
        for _ in range(_REPLAY_PER_ROUND):
            if self._stop.is_set() or time.monotonic() < self._next_attempt:
                return
            head = self._spool.oldest()
            if head is None:
                return
            key, batch = head
            outcome, refused = self._send(batch)
            if outcome == "retry":
                return
            self._keep_refused(refused)
            self._spool.remove(key)

    def _spill_queue(self) -> None:
        """After the worker stopped: whatever is still queued goes to the spool, in order."""
        records: list[tuple[Part, dict[str, Any], int]] = []
        while True:
            try:
                records.append(self._queue.get_nowait())
            except queue.Empty:
                break
        if records:
            self._stop.set()
            self._deliver(records)


class _AtExit:
    """Closes every live delivery when the interpreter exits, so queued records are sent or
    spooled. Weak references: a delivery that was garbage-collected needs nothing."""

    def __init__(self) -> None:
        self._live: weakref.WeakSet[Delivery] = weakref.WeakSet()
        atexit.register(self._close_all)

    def add(self, delivery: Delivery) -> None:
        self._live.add(delivery)

    def discard(self, delivery: Delivery) -> None:
        self._live.discard(delivery)

    def _close_all(self) -> None:
        for delivery in list(self._live):
            delivery.close()


_at_exit = _AtExit()
