"""A traced process for the outage test: records ``count`` operations starting at ``first``.

Run as ``python -m tests.support.client_stream URL PROJECT SPOOL FIRST COUNT [--flush]``. It prints
``recorded N`` every 100 operations so the test can stop the service mid-stream, and exits
normally: the tracer's exit hook sends what it can and spools the rest for the next process.
With ``--flush`` it first waits until everything (the spool included) is delivered and prints
``delivered True|False``.
"""

from __future__ import annotations

import sys
import time

from memtrace_client import Backoff, MemTraceClient, Tracer


def main(url: str, project: str, spool: str, first: int, count: int, flush: bool) -> None:
    client = MemTraceClient(url, project=project, timeout_s=5)
    tracer = Tracer(
        client,
        system="outage-test",
        spool_dir=spool,
        max_items=150,
        flush_interval_s=0.2,
        backoff=Backoff(base_s=0.1, max_s=1.0),
    )
    for i in range(first, first + count):
        source = tracer.message(f"turn {i}: the user said something worth keeping", id=f"m-{i}")
        with tracer.operation("extract", kind="extraction", inputs=[source], id=f"op-{i}") as op:
            op.output(tracer.memory(f"fact {i}", id=f"f-{i}", memory_id=f"mem-{i}"))
        if (i + 1) % 100 == 0:
            print(f"recorded {i + 1 - first}", flush=True)
            time.sleep(0.05)  # a stream, not a burst: the service can be stopped in the middle
    if flush:
        print(f"delivered {bool(tracer.flush(timeout_s=180))}", flush=True)
    print(f"pending {tracer.delivery.pending_batches}", flush=True)


if __name__ == "__main__":
    url, project, spool, first, count = sys.argv[1:6]
    main(url, project, spool, int(first), int(count), "--flush" in sys.argv)
