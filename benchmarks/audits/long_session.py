"""``GET /sessions`` and ``GET /sessions/{id}`` on a project whose sessions are long, before and
after a change, on one Neo4j. Run: ``python -m benchmarks.audits long-session --before DIR``
where ``DIR`` is a checkout of the code before (``git worktree add DIR COMMIT`` will do); the
code after is this checkout.

One project per size (``--operations``, default 10,000, 50,000 and 200,000): ONE session, "long",
whose operations each read a message of their own and answer a failed case (a session id stamped
on every operation of a deployment), and 20 short sessions of 3 operations beside it. Ingested
once, through the after service. For each size, the first page of ``GET /sessions`` and ``GET
/sessions/long`` ``--repetitions`` times from each service (after first, then before, Neo4j idle
in between: ``long_entry.wait_idle``). Both services read with the default budget
(``MEMTRACE_AUDIT_TIMEOUT_S``, 30 s); a request past it is recorded with its status (422).
Figures go to ``benchmarks/results/sessions_long.json`` (``--out`` to name another file).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from benchmarks.audits.long_entry import CODES, before_and_after, repeated, wait_idle
from benchmarks.figures import save
from tests.support.servers import REPO, fresh_neo4j

COMMAND = "python -m benchmarks.audits long-session"
SHORT_SESSIONS = 20
BATCH = 5_000  # operations per POST /traces


def session_batches(project: str, operations: int) -> list[dict[str, Any]]:
    """The long session's operations in batches of :data:`BATCH`, then the short sessions."""
    ops: list[dict[str, Any]] = []
    cases: list[dict[str, Any]] = []
    sessions = [("long", operations)] + [(f"short-{s:02d}", 3) for s in range(SHORT_SESSIONS)]
    for session, n in sessions:
        for i in range(n):
            ops.append(
                {
                    "id": f"{session}-op-{i}",
                    "name": "respond",
                    "kind": "response",
                    "session_id": session,
                    "ts": f"2026-06-01T{10 + i // 360_000:02d}:{i // 6000 % 60:02d}:"
                    f"{i // 100 % 60:02d}.{i % 100:02d}Z",
                    "inputs": [{"id": f"{session}-m-{i}", "kind": "message", "content": "hi"}],
                    "outputs": [{"id": f"{session}-a-{i}", "kind": "answer", "content": "no"}],
                }
            )
            cases.append(
                {
                    "id": f"{session}-case-{i}",
                    "question": "q?",
                    "expected_answer": "yes",
                    "verdict": "failed",
                    "answer_unit": f"{session}-a-{i}",
                }
            )
    return [
        {"project": project, "operations": ops[k : k + BATCH], "cases": cases[k : k + BATCH]}
        for k in range(0, len(ops), BATCH)
    ]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--before", type=Path, required=True, help="checkout before the change")
    parser.add_argument("--operations", type=int, nargs="+", default=[10_000, 50_000, 200_000])
    parser.add_argument("--repetitions", type=int, default=3, help="requests per service")
    parser.add_argument("--out", default="sessions_long", help="results/<OUT>.json")
    args = parser.parse_args(argv)
    before = args.before.resolve()
    figures: dict[str, Any] = {
        "command": " ".join([COMMAND, *(argv if argv is not None else sys.argv[1:])]),
        "before": str(before),
        "after": str(REPO),
        "load_average_at_start": os.getloadavg(),
        "parameters": {"operations": args.operations, "repetitions": args.repetitions},
    }
    with (
        tempfile.TemporaryDirectory() as tmp,
        fresh_neo4j(heap="2g", pagecache="1g") as local,
        ExitStack() as stack,
    ):
        clients = before_and_after(stack, local.uri, Path(tmp), before, timeout_s=600)
        sizes: dict[str, Any] = {}
        for n in args.operations:
            project = f"sessions-{n}"
            started = time.perf_counter()
            for batch in session_batches(project, n):
                clients["after"].post("/traces", json=batch).raise_for_status()
            size: dict[str, Any] = {"ingest_s": round(time.perf_counter() - started, 1)}
            for code in reversed(CODES):
                for name, path in (("list", "/sessions"), ("one", "/sessions/long")):
                    size[f"{code}_waited_for_idle_s"] = wait_idle(local)
                    size[f"{code}_{name}"] = repeated(
                        clients[code], path, {"project": project}, args.repetitions
                    )
                    size[f"{code}_{name}"].pop("first_rows")
            long = clients["after"].get("/sessions", params={"project": project}).json()
            size["after_long_row"] = long["sessions"][0] if "sessions" in long else long
            sizes[str(n)] = size
            print(f"{n} operations: {size}", flush=True)
            figures["sizes"] = sizes
            save(args.out, figures)  # so far, in case a later step fails
    figures["load_average_at_end"] = os.getloadavg()
    print("written to", save(args.out, figures))
