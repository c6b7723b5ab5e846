"""The closed loop, measured: run a memory system on LoCoMo conversations, judge its answers,
attribute the failures, optimise the blamed prompts, run again, for N rounds.

    python -m benchmarks.closed_loop                      # simulated model, 3 rounds
    python -m benchmarks.closed_loop --rounds 2 --sessions 6 --optimize 26 --held-out 30,41

Conversations are split: failures of the ``--optimize`` ones drive the optimisation, the
``--held-out`` ones only measure. Each round: the memory system (``system``) runs
every conversation with the newest prompt versions (``client.prompt(name)``), the optimised
split's failed cases are attributed (heuristic judge), and every prompt
whose newest version has attributed failures is optimised (``POST /prompts/{name}/optimize``).
Accuracy "after" a round is the next run's, with the new versions; held-out runs go to a
project of their own per round, so they never feed the optimisation.

The model is the deterministic simulated one (``model``, served over the
OpenAI-compatible HTTP API) unless ``--llm-base-url`` names a real endpoint, which then serves
both the memory system and the service's optimiser (``MEMTRACE_LLM_*``). Prints per round:
accuracy before/after on both splits, the error types of the optimised split's failures, the LLM
calls and tokens of the optimisation, and the extraction answers that held no usable JSON
(counted, never fatal); saves benchmarks/results/closed_loop.json.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import tempfile
import time
import uuid
from collections import Counter
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx
from memtrace_client import MemTraceClient, Prompt, Tracer

from benchmarks.closed_loop.model import respond
from benchmarks.closed_loop.system import INITIAL_PROMPTS, run_conversation
from benchmarks.datasets.locomo_source import conversation_files, read_conversation
from benchmarks.figures import save
from service.llm.blocking import BlockingChat
from tests.support.llm_server import scripted_llm
from tests.support.servers import fresh_neo4j, run_service

PROJECT = "closed-loop"


def _prompts(client: MemTraceClient, round_no: int) -> dict[str, Prompt]:
    if round_no == 0:
        return {name: Prompt(name, text) for name, text in INITIAL_PROMPTS.items()}
    return {name: client.prompt(name) for name in INITIAL_PROMPTS}


def _run_split(
    service_url: str,
    project: str,
    names: list[str],
    prompts: dict[str, Prompt],
    model: BlockingChat,
    sessions: int | None,
    data_dir: str | None,
    tag: str,
) -> dict[str, Any]:
    files = {p.stem: p for p in conversation_files(data_dir)}
    tracer = Tracer(MemTraceClient(service_url, project=project), system="sim-memory")
    asked = correct = calls = extractions = unusable = 0
    case_ids: list[str] = []
    for name in names:
        run = run_conversation(
            read_conversation(files[name]), prompts, tracer, model, sessions, tag
        )
        asked, correct, calls = asked + run.asked, correct + run.correct, calls + run.llm_calls
        extractions += run.extractions
        unusable += run.unusable_extractions
        case_ids += run.case_ids
    if not tracer.flush(300):
        raise RuntimeError("the trace was not delivered")
    tracer.close()
    return {
        "asked": asked,
        "correct": correct,
        "accuracy": round(correct / asked, 4) if asked else 0.0,
        "memory_llm_calls": calls,
        "extraction_answers": extractions,
        "unusable_extraction_answers": unusable,
        "case_ids": case_ids,
    }


def _attribute(http: httpx.Client, project: str, case_ids: list[str]) -> Counter[str]:
    """Attribute this run's failed cases (heuristic judge, one request per case: deterministic,
    and no job heartbeat to lose on a loaded machine); the error types found."""
    failed = {
        c["id"]
        for c in http.get(
            "/cases", params={"project": project, "verdict": "failed", "limit": 10_000}
        ).json()
    }
    types: Counter[str] = Counter()
    for case_id in case_ids:
        if case_id not in failed:
            continue
        result = http.post(f"/attribute/{case_id}", params={"project": project}).json()
        if result.get("status") == "attributed":
            types[result["error_type"]] += 1
    return types


def _optimise(http: httpx.Client, project: str, budget: dict[str, int]) -> list[dict[str, Any]]:
    """Optimise every prompt whose newest version has attributed failures."""
    done = []
    for prompt in http.get("/prompts", params={"project": project}).json():
        latest = prompt["versions"][-1]
        if not latest["failures"]:
            continue
        answer = http.post(
            f"/prompts/{prompt['name']}/optimize", params={"project": project}, json=budget
        )
        body = answer.json()
        if answer.status_code != 200:  # refused (e.g. unchanged): reported, nothing stored
            done.append({"name": prompt["name"], "refused": body.get("message")})
            continue
        done.append(
            {
                "name": prompt["name"],
                "from": latest["label"],
                "to": body["new_label"],
                "cases": len(body["cases"]),
                "added": [
                    line[1:]
                    for line in body["diff"].splitlines()
                    if line.startswith("+") and not line.startswith("+++")
                ],
                "cost": body["cost"],
            }
        )
    return done


def run_loop(
    service_url: str,
    llm_base_url: str,
    *,
    optimize: list[str],
    held_out: list[str],
    rounds: int,
    sessions: int | None,
    model_name: str = "simulated",
    api_key: str = "not-set",
    data_dir: str | None = None,
    budget: dict[str, int] | None = None,
    project: str = PROJECT,
) -> dict[str, Any]:
    """The whole loop against a running service; returns every round's figures."""
    budget = budget or {"max_cases": 32, "max_llm_calls": 40, "max_tokens": 200_000}
    client = MemTraceClient(service_url, project=project)
    results: list[dict[str, Any]] = []
    with (
        httpx.Client(base_url=service_url, timeout=600) as http,
        BlockingChat(base_url=llm_base_url, api_key=api_key, model=model_name) as model,
    ):
        for round_no in range(rounds + 1):
            prompts = _prompts(client, round_no)
            opt = _run_split(
                service_url,
                project,
                optimize,
                prompts,
                model,
                sessions,
                data_dir,
                f"r{round_no}-",
            )
            held = _run_split(
                service_url,
                f"{project}-held-out-{round_no}",
                held_out,
                prompts,
                model,
                sessions,
                data_dir,
                f"r{round_no}-",
            )
            held.pop("case_ids")
            run_cases = opt.pop("case_ids")
            row: dict[str, Any] = {
                "round": round_no,
                "versions": {n: p.version or f"{n}@1" for n, p in prompts.items()},
                "optimized_split": opt,
                "held_out_split": held,
            }
            if round_no < rounds:
                found = _attribute(http, project, run_cases)
                row["error_types"] = dict(sorted(found.items()))
                row["optimizations"] = _optimise(http, project, budget)
            results.append(row)
            if round_no < rounds and not any("to" in o for o in row["optimizations"]):
                break  # nothing changed: another round would repeat this one
    return {"rounds": results, "summary": _summary(results)}


def _summary(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per optimisation round: accuracy before (its run) and after (the next run)."""
    rows = []
    for before, after in itertools.pairwise(results):
        calls = sum(o.get("cost", {}).get("llm_calls", 0) for o in before["optimizations"])
        tokens = sum(
            o.get("cost", {}).get("input_tokens", 0) + o.get("cost", {}).get("output_tokens", 0)
            for o in before["optimizations"]
        )
        rows.append(
            {
                "round": before["round"] + 1,
                "optimized_before": before["optimized_split"]["accuracy"],
                "optimized_after": after["optimized_split"]["accuracy"],
                "held_out_before": before["held_out_split"]["accuracy"],
                "held_out_after": after["held_out_split"]["accuracy"],
                "error_types": before["error_types"],
                "optimised": [
                    f"{o['from']} -> {o['to']}" for o in before["optimizations"] if "to" in o
                ],
                "llm_calls": calls,
                "tokens": tokens,
                "unusable_extractions": "{}/{}".format(*_unusable(before)),
            }
        )
    return rows


def _unusable(row: dict[str, Any]) -> tuple[int, int]:
    """A run's extraction answers without usable facts (they stored nothing), and all of them,
    both splits."""
    splits = (row["optimized_split"], row["held_out_split"])
    return (
        sum(s["unusable_extraction_answers"] for s in splits),
        sum(s["extraction_answers"] for s in splits),
    )


def print_table(summary: list[dict[str, Any]], out: Any = sys.stdout) -> None:
    print(
        "round | optimised split before -> after | held-out before -> after | "
        "error types (optimised split) | prompts | LLM calls | tokens | unusable extractions",
        file=out,
    )
    for r in summary:
        types = ", ".join(f"{k} {n}" for k, n in r["error_types"].items())
        print(
            f"{r['round']} | {r['optimized_before']:.1%} -> {r['optimized_after']:.1%} | "
            f"{r['held_out_before']:.1%} -> {r['held_out_after']:.1%} | {types} | "
            f"{', '.join(r['optimised']) or '-'} | {r['llm_calls']} | {r['tokens']} | "
            f"{r['unusable_extractions']}",
            file=out,
        )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--optimize", default="26", help="Conversations optimised on (ids).")
    parser.add_argument("--held-out", default="30,41", help="Conversations only measured.")
    parser.add_argument("--sessions", type=int, default=None, help="First N sessions only.")
    parser.add_argument("--data", default=None, help="LoCoMo folder (../shared/data/locomo10).")
    parser.add_argument("--llm-base-url", default=None, help="A real endpoint (else simulated).")
    parser.add_argument("--llm-model", default="gpt-4.1-mini")
    parser.add_argument("--llm-api-key", default="not-set")
    args = parser.parse_args(argv)

    with ExitStack() as stack:
        if args.llm_base_url:
            base_url, model_name = args.llm_base_url, args.llm_model
        else:
            base_url, model_name = stack.enter_context(scripted_llm(respond)).base_url, "simulated"
        local = stack.enter_context(fresh_neo4j(heap="1g", pagecache="512m"))
        workdir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="closed-loop-")))
        service = stack.enter_context(
            run_service(
                local.uri,
                workdir,
                MEMTRACE_LLM_BASE_URL=base_url,
                MEMTRACE_LLM_MODEL=model_name,
                MEMTRACE_LLM_API_KEY=args.llm_api_key,
                MEMTRACE_LLM_SELF_CHECK="false",  # the loop's model optimises; it judges nothing
            )
        )
        started = time.perf_counter()
        figures = run_loop(
            service.url,
            base_url,
            optimize=args.optimize.split(","),
            held_out=args.held_out.split(","),
            rounds=args.rounds,
            sessions=args.sessions,
            model_name=model_name,
            api_key=args.llm_api_key,
            data_dir=args.data,
            project=f"{PROJECT}-{uuid.uuid4().hex[:6]}",
        )
        seconds = round(time.perf_counter() - started, 1)
    print_table(figures["summary"])
    for row in figures["rounds"]:
        bad, of = _unusable(row)
        if bad:
            print(
                f"run {row['round']}: {bad} of {of} extraction answers held no JSON "
                '{"facts": [...]} object: those turns stored no memory'
            )
    last = figures["rounds"][-1]
    if last.get("optimizations") and not any("to" in o for o in last["optimizations"]):
        print(f"round {last['round'] + 1}: no new version (every proposal refused), stopped:")
        for o in last["optimizations"]:
            print(f"  {o['name']}: {o['refused']}")
    path = save(
        "closed_loop",
        {
            "model": "simulated (benchmarks.closed_loop.model)"
            if not args.llm_base_url
            else model_name,
            "optimize": args.optimize,
            "held_out": args.held_out,
            "sessions": args.sessions,
            "seconds": seconds,
            **figures,
        },
    )
    print(f"saved {path}")
