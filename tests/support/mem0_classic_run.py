"""Mem0 1.x (the classic pipeline) traced into MemTrace, run by the classic-pipeline test.

Mem0 1.x and 2.x cannot share one environment, so this script runs under the Python of
``.venv-mem0-classic`` (``mem0ai`` 1.x and ``memtrace-client`` only; ``make install`` builds it).
Usage: ``python tests/support/mem0_classic_run.py SERVICE_URL PROJECT LLM_BASE_URL WORKDIR``.
It prints one JSON line: the Mem0 version and the id of the failed case.
"""

from __future__ import annotations

import json
import os
import sys


def main(service_url: str, project: str, llm_base_url: str, workdir: str) -> None:
    os.environ["MEM0_TELEMETRY"] = "False"
    os.environ["MEM0_DIR"] = os.path.join(workdir, "mem0")
    from mem0 import Memory
    from mem0_config import mem0_config  # beside this script (tests/), on sys.path when run
    from memtrace_client import MemTraceClient
    from memtrace_client.adapters.mem0 import trace_mem0

    memory = trace_mem0(
        Memory.from_config(mem0_config(llm_base_url, workdir)),
        MemTraceClient(service_url, project=project),
        spool_dir=os.path.join(workdir, "spool"),
    )
    events = []
    for text in (
        "I work at Initech as a data analyst.",
        "My cat is called Miso.",
        "Miso is my cat, as I said.",
    ):
        added = memory.add([{"role": "user", "content": text}], user_id="alex")
        events.append([r["event"] for r in added["results"]])
    question = "Where does the user work?"
    found = memory.search(question, user_id="alex", limit=3)
    wrong = memory.answer(found, "I do not know where the user works.")
    case_id = memory.judge(question, "Initech", wrong)
    delivered = bool(memory.tracer.flush(60))
    print(
        json.dumps(
            {
                "version": memory.version,
                "pipeline": memory.pipeline,
                "events": events,
                "case": case_id,
                "delivered": delivered,
            }
        )
    )


if __name__ == "__main__":
    main(*sys.argv[1:5])
