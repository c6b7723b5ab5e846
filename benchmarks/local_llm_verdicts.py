"""Verdict requests against a real llama.cpp server with SmolLM2-135M-Instruct: which request form
gives usable verdicts, in how many tokens and seconds, and what one slot does to queued calls.

    python -m benchmarks.local_llm_verdicts [--threads 2] [--queued 4]

The server is tests/support/llama_server.py's (xllamacpp, one slot, the ``local-llm`` extra).
Each toy case asks whether units carry the answer to a question; every case is asked twice, its
units in both orders, so a model that says "true" for whatever comes first scores no better than
chance. Two strict ``json_schema`` forms are compared: an object keyed by the unit ids
(``{"<id>": bool}``) and an array of ``{"id": enum of ids, "carries": bool}``. Then ``--queued``
calls are sent at once to show the wait in the server's queue (the latency a client sees grows
with its place in the queue). Figures go to ``benchmarks/results/local_llm_verdicts.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import openai

from tests.support.llama_server import LlamaServer, run_llama_server

RESULTS = Path(__file__).parent / "results" / "local_llm_verdicts.json"

# (question, [(unit id, text)], the id that carries the answer)
CASES: list[tuple[str, list[tuple[str, str]], str]] = [
    (
        "Where did Caroline move from?",
        [
            ("msg-7f3a", "Caroline said she moved from Sweden four years ago."),
            ("mem-02bc", "Melanie painted a sunset at the lake last weekend."),
        ],
        "msg-7f3a",
    ),
    (
        "What is Jon's job?",
        [
            ("mem-11d0", "Jon likes to go hiking on weekends."),
            ("msg-5e21", "Jon works as a dance studio owner."),
            ("mem-9a4f", "Gina lost her job at Door Dash."),
        ],
        "msg-5e21",
    ),
    (
        "What pet does Audrey have?",
        [
            ("mem-40c2", "The weather in Paris was rainy."),
            ("msg-b817", "Audrey has a dog named Pepper."),
        ],
        "msg-b817",
    ),
    (
        "When did Melanie paint a sunrise?",
        [
            ("msg-3c90", "Melanie painted a sunrise in 2022."),
            ("mem-77e1", "Caroline went to an LGBTQ support group on 7 May."),
        ],
        "msg-3c90",
    ),
]

SYSTEM = "You judge whether memory units state the answer to a question. Answer in JSON."


def keyed_schema(ids: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {uid: {"type": "boolean"} for uid in ids},
        "required": ids,
        "additionalProperties": False,
    }


def array_schema(ids: list[str]) -> dict[str, Any]:
    verdict = {
        "type": "object",
        "properties": {"id": {"type": "string", "enum": ids}, "carries": {"type": "boolean"}},
        "required": ["id", "carries"],
        "additionalProperties": False,
    }
    verdicts = {"type": "array", "items": verdict, "minItems": len(ids), "maxItems": len(ids)}
    return {
        "type": "object",
        "properties": {"verdicts": verdicts},
        "required": ["verdicts"],
        "additionalProperties": False,
    }


def user_message(question: str, units: list[tuple[str, str]], form: str) -> str:
    listed = "\n".join(f"[{uid}] {text}" for uid, text in units)
    shape = (
        "an object with each unit id as a key and true (it states the answer) or false"
        if form == "keyed"
        else 'an object {"verdicts": [...]} with one {"id", "carries"} entry per unit'
    )
    return (
        f"Question: {question}\nUnits:\n{listed}\n"
        f"Does each unit state the answer? Reply with {shape}."
    )


def ask(
    client: openai.OpenAI,
    server: LlamaServer,
    question: str,
    units: list[tuple[str, str]],
    form: str,
) -> tuple[dict[str, bool] | None, dict[str, Any]]:
    ids = [uid for uid, _ in units]
    schema = keyed_schema(ids) if form == "keyed" else array_schema(ids)
    started = time.monotonic()
    reply = client.chat.completions.create(  # type: ignore[call-overload]
        model=server.model,
        messages=[
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": user_message(question, units, form)},
        ],
        response_format={
            "type": "json_schema",
            "json_schema": {"name": "verdicts", "strict": True, "schema": schema},
        },
        max_tokens=32 * len(ids) + 32,
        temperature=0,
    )
    seconds = time.monotonic() - started
    choice = reply.choices[0]
    call = {
        "seconds": round(seconds, 2),
        "finish_reason": choice.finish_reason,
        "prompt_tokens": reply.usage.prompt_tokens if reply.usage else None,
        "completion_tokens": reply.usage.completion_tokens if reply.usage else None,
    }
    try:
        parsed = json.loads(choice.message.content or "")
    except json.JSONDecodeError:
        return None, call
    if form == "keyed":
        return {k: v for k, v in parsed.items() if k in ids}, call
    return {v["id"]: v["carries"] for v in parsed["verdicts"]}, call


def run(threads: int, queued: int) -> dict[str, Any]:
    with (
        tempfile.TemporaryDirectory() as logs,
        run_llama_server(Path(logs), threads=threads) as server,
        openai.OpenAI(
            base_url=server.base_url, api_key="unused", max_retries=0, timeout=600
        ) as client,
    ):
        forms: dict[str, Any] = {}
        for form in ("keyed", "array"):
            calls, right, asked, usable = [], 0, 0, 0
            for question, units, carrier in CASES:
                for order in (units, list(reversed(units))):
                    verdicts, call = ask(client, server, question, order, form)
                    calls.append(call)
                    ids = [uid for uid, _ in order]
                    asked += len(ids)
                    if verdicts is not None:
                        usable += sum(uid in verdicts for uid in ids)
                        right += sum(verdicts.get(uid) == (uid == carrier) for uid in ids)
            seconds = sorted(c["seconds"] for c in calls)
            forms[form] = {
                "calls": len(calls),
                "verdicts_asked": asked,
                "verdicts_usable": usable,
                "verdicts_right": right,
                "median_seconds": seconds[len(seconds) // 2],
                "max_seconds": seconds[-1],
                "completion_tokens": sum(c["completion_tokens"] or 0 for c in calls),
                "length_cuts": sum(c["finish_reason"] == "length" for c in calls),
            }
            print(form, forms[form])

        def queued_call(i: int) -> float:
            question, units, _ = CASES[i % len(CASES)]
            return ask(client, server, question, units, "keyed")[1]["seconds"]

        started = time.monotonic()
        with ThreadPoolExecutor(queued) as pool:
            latencies = list(pool.map(queued_call, range(queued)))
        queue = {
            "sent_at_once": queued,
            "latencies_seconds": sorted(latencies),
            "wall_seconds": round(time.monotonic() - started, 2),
        }
        print("queued", queue)
    return {
        "threads": threads,
        "load_average": os.getloadavg(),
        "forms": forms,
        "queue": queue,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--queued", type=int, default=4)
    args = parser.parse_args()
    figures = run(args.threads, args.queued)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(figures, indent=2) + "\n")
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
