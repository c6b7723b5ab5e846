"""The attribution benchmark's core on a tiny synthetic dataset, against the test services.

Checks the oracle (it marks exactly the units holding the case's critical fact), the flat-log
baseline prompt (every operation, time-ordered), and that the metrics are computed from the real
``POST /attribute`` responses.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from benchmarks.attribution import flatlog
from benchmarks.attribution.accuracy import (
    Row,
    parse_args,
    run_baseline,
    run_in_process,
    run_rows,
    services,
)
from benchmarks.attribution.endpoint import Endpoint, redacted
from benchmarks.attribution.flatlog import batch_units, op_ids_in_log
from benchmarks.attribution.inprocess import attribute_in_process
from benchmarks.attribution.metrics import (
    Record,
    accuracy,
    attributed_quality,
    confusion_matrix,
    op_correct,
    summarize,
    type_correct,
)
from benchmarks.attribution.oracle import Oracle, units_in_prompt
from benchmarks.attribution.report import figures, markdown
from benchmarks.attribution.run import Dataset, in_project, ingest, split_batch
from benchmarks.datasets import generate_conversation
from benchmarks.datasets.locomo_source import REPO_ROOT, conversation_files
from service.attribution.judges.base import Question, UnitText
from service.attribution.judges.heuristic import HeuristicJudge
from service.attribution.judges.llm import build_messages
from tests.support.llm_server import ScriptedLLM, scripted_llm
from tests.support.servers import Neo4jHandle, ServiceHandle


@pytest.fixture(scope="module")
def tiny() -> Dataset:
    """Two small conversations (mem0 and naive RAG): every error type, about 20 failed cases."""
    tag = uuid.uuid4().hex[:8]
    batches = [
        in_project(
            generate_conversation(
                system, seed=7, n_sessions=3, n_distractors=6, n_questions=10, project=f"b-{tag}"
            ),
            f"b-{tag}-{system}",
        )
        for system in ("mem0", "naive_rag")
    ]
    return Dataset("synthetic-tiny", batches)


@pytest.fixture(scope="module")
def oracle(tiny: Dataset) -> Oracle:
    return Oracle.of(tiny.batches)


@pytest.fixture
def oracle_llm(llm: ScriptedLLM, oracle: Oracle) -> Iterator[ScriptedLLM]:
    script = llm.script  # type: ignore[attr-defined]
    before = script["answer"]
    script["answer"] = oracle.answer
    yield llm
    script["answer"] = before


def _judge_request(question: Question, units: list[UnitText]) -> dict[str, object]:
    return {"messages": build_messages(question, units, 1500)}


def test_oracle_marks_exactly_the_units_holding_the_critical_fact(
    tiny: Dataset, oracle: Oracle
) -> None:
    for item in tiny.batches:
        units = batch_units(item.batch)
        statements = item.hidden["facts"]
        for case in item.batch["cases"]:
            if case["id"] not in item.labels:
                continue
            statement = statements[case["id"]]
            shown = [UnitText(uid, u["kind"], u["content"]) for uid, u in units.items()]
            question = Question(case["id"], case["question"], case["expected_answer"], "x")
            answer = json.loads(oracle.answer(_judge_request(question, shown)))
            said = {v["id"]: v["carries"] for v in answer["verdicts"]}
            assert said == {uid: statement in u["content"] for uid, u in units.items()}
            assert any(said.values())  # the stating message at least
            # The context the answer read carries the fact exactly for a ResponseError.
            response_op = next(
                op for op in item.batch["operations"] if case["answer_unit"] in op["outputs"]
            )
            context = next(u for u in response_op["inputs"] if units[u]["kind"] == "context")
            label = item.labels[case["id"]]["error_type"]
            assert said[context] == (label == "ResponseError")
    assert oracle.stats["judge_unmatched"] == 0


def test_oracle_counts_carriers_hidden_by_clipping(tiny: Dataset) -> None:
    oracle = Oracle.of(tiny.batches)
    item = tiny.batches[0]
    case_id = next(c for c in item.hidden["facts"] if c in item.labels)
    case = next(c for c in item.batch["cases"] if c["id"] == case_id)
    carrier = next(iter(oracle.by_case[(item.batch["project"], case_id)].carriers))
    statement = item.hidden["facts"][case_id]
    # The judge clips long contents: a carrier whose fact lies past the cut is judged by its id.
    shown = UnitText(carrier, "memory", "x" * 2000 + statement)
    question = Question(case_id, case["question"], case["expected_answer"], "x")
    answer = json.loads(oracle.answer(_judge_request(question, [shown])))
    assert answer == {"verdicts": [{"id": carrier, "carries": True}]}
    assert oracle.stats["carriers_hidden_by_clipping"] == 1
    assert oracle.clipped_by_system() == {item.system: 1}
    prompt = str(build_messages(question, [shown], 1500)[-1]["content"])
    assert units_in_prompt(prompt)[carrier].endswith("more characters]")


def test_flatlog_prompt_holds_every_operation_in_time_order(tiny: Dataset, oracle: Oracle) -> None:
    item = tiny.batches[0]
    jobs = [j for j in tiny.flatlog_jobs() if j.key.startswith(item.batch["project"] + "/")]
    assert len(jobs) == len(item.labels)
    messages = flatlog.build_messages(jobs[0].log, jobs[0].case, jobs[0].wrong_answer)
    prompt = str(messages[-1]["content"])
    ops = item.batch["operations"]
    assert op_ids_in_log(prompt) == [op["id"] for op in sorted(ops, key=lambda o: o["ts"])]
    for uid, unit in batch_units(item.batch).items():
        if any(uid in op["inputs"] or uid in op["outputs"] for op in ops):
            assert json.dumps(unit["content"], ensure_ascii=False) in prompt
    assert json.dumps(jobs[0].case["question"]) in prompt
    label = item.labels[jobs[0].case["id"]]
    answer = json.loads(oracle.answer({"messages": messages}))
    assert answer == {"error_type": label["error_type"], "op_id": label["operation_id"]}


def test_split_batch_keeps_every_item_within_the_limits(tiny: Dataset) -> None:
    batch = tiny.batches[0].batch
    assert split_batch(batch) == [batch]
    copies = 10_000 // len(batch["operations"]) + 1
    many = {**batch, "operations": batch["operations"] * copies}  # > 10,000 operations
    parts = split_batch(many)
    assert len(parts) > 1
    assert all(len(p["operations"]) <= 10_000 for p in parts)
    assert sum(len(p["operations"]) for p in parts) == len(many["operations"])
    assert sum(len(p["units"]) for p in parts) == len(batch["units"])


def test_harness_core_against_the_services(
    tiny: Dataset,
    oracle: Oracle,
    service: ServiceHandle,
    llm_service: ServiceHandle,
    oracle_llm: ScriptedLLM,
) -> None:
    with httpx.Client(base_url=service.url, timeout=60) as client:
        ingest(client, tiny.batches)
    rows = [Row("heuristic", "heuristic", service.url), Row("llm-all", "llm", llm_service.url)]
    before = len(oracle_llm.requests)
    records, walls = run_rows([tiny], rows, concurrency=2)
    judge_requests = len(oracle_llm.requests) - before
    cases = tiny.cases()
    assert len(records) == 2 * len(cases) >= 30
    op_ids = {op["id"] for item in tiny.batches for op in item.batch["operations"]}
    for r in records:
        assert r["status"] in ("attributed", "inconclusive", "unanswerable"), r
        assert r["op_id"] is None or r["op_id"] in op_ids
    llm_records = [r for r in records if r["judge"] == "llm-all"]
    assert sum(r["llm_calls"] for r in llm_records) == judge_requests > 0
    # The stored attribution is what the record says.
    r = records[0]
    with httpx.Client(base_url=service.url, timeout=60) as client:
        listed = client.get("/attributions", params={"project": r["project"]}).json()
    stored = next(a for a in listed if a["case_id"] == r["case_id"])
    assert (stored["error_type"], (stored["operation"] or {}).get("id")) == (
        r["error_type"],
        r["op_id"],
    )

    base_records, base_walls = run_baseline([tiny], oracle_llm, concurrency=2)
    assert accuracy(base_records) == {
        "type_accuracy": 1.0,
        "op_accuracy": 1.0,
        "joint_accuracy": 1.0,
    }
    assert all(r["llm_calls"] == 1 and r["input_tokens"] > 0 for r in base_records)

    inproc, inproc_wall = asyncio.run(
        attribute_in_process(tiny, "inproc-heuristic", lambda _: HeuristicJudge())
    )
    heuristic = {r["case_id"]: r for r in records if r["judge"] == "heuristic"}
    same = sum(
        (r["error_type"], r["op_id"])
        == (heuristic[r["case_id"]]["error_type"], heuristic[r["case_id"]]["op_id"])
        for r in inproc
    )
    assert same >= 0.9 * len(inproc)  # the same engine, without HTTP and Neo4j

    fig = figures(
        records + base_records + inproc,
        {**walls, **base_walls, (tiny.name, "inproc-heuristic"): inproc_wall},
        {tiny.name: tiny.sizes()},
    )
    s = fig["summary"]["synthetic-tiny"]
    heur = [r for r in records if r["judge"] == "heuristic"]
    assert s["heuristic"]["op_accuracy"] == round(sum(map(op_correct, heur)) / len(heur), 4)
    assert s["heuristic"]["type_accuracy"] == round(sum(map(type_correct, heur)) / len(heur), 4)
    assert s["heuristic"]["cases_per_s"] > 0
    assert s["baseline"]["op_accuracy"] == 1.0
    ratio = fig["token_ratio_vs_baseline"]["synthetic-tiny"]["llm-all"]
    assert 0 < ratio["ratio_of_means"] < 1
    assert sum(c["count"] for c in fig["confusion"]["heuristic"]["synthetic"]) == sum(
        not (type_correct(r) and op_correct(r)) for r in heur
    )
    assert "| synthetic-tiny | heuristic |" in markdown(fig)


def test_the_llm_rows_ask_the_endpoint_given(
    neo4j: Neo4jHandle, service: ServiceHandle, llm: ScriptedLLM, tmp_path: Path
) -> None:
    """``--llm-base-url URL --llm-model NAME --llm-api-key KEY``: the service the harness starts
    for an llm row and the in-process llm row both ask that endpoint for that model; the oracle
    (here the session's scripted server) is never asked, and the key is not recorded."""
    tag = uuid.uuid4().hex[:8]
    small = Dataset(
        "synthetic-endpoint",
        [
            in_project(
                generate_conversation(
                    "mem0", seed=3, n_sessions=2, n_distractors=4, n_questions=6, project=tag
                ),
                f"e-{tag}",
            )
        ],
    )
    with scripted_llm(Oracle.of(small.batches).answer) as theirs:
        argv = ["--llm-base-url", theirs.base_url, "--llm-model", "their-model"]
        args = parse_args([*argv, "--llm-api-key", "their-key"])
        assert args.endpoint == Endpoint(theirs.base_url, "their-model", "their-key")
        with httpx.Client(base_url=service.url, timeout=60) as client:
            ingest(client, small.batches)
        oracle_asked = len(llm.requests)
        with services(
            neo4j.uri,
            args.endpoint,
            ["llm-all"],
            tmp_path,
            MEMTRACE_NEO4J_USER=neo4j.user,
            MEMTRACE_NEO4J_PASSWORD=neo4j.password,
        ) as urls:
            records, _ = run_rows([small], [Row("llm-all", "llm", urls["llm-all"])], 2)
        # The service asks the endpoint for one token as it starts (a wrong URL shows in
        # /readyz at once); every other request is a judge call of a case.
        probes = [r for r in theirs.requests if r.get("max_tokens") == 1]
        assert len(probes) == 1
        over_http = len(theirs.requests)
        assert sum(r["llm_calls"] for r in records) == over_http - 1 > 0
        inproc, _ = run_in_process([small], args.endpoint)
        in_process = [r for r in inproc if r["judge"] == "inproc-llm"]
        assert sum(r["llm_calls"] for r in in_process) == len(theirs.requests) - over_http > 0
        assert {body["model"] for body in theirs.requests} == {"their-model"}
    assert len(llm.requests) == oracle_asked
    assert "their-key" not in " ".join(redacted([*argv, "--llm-api-key", "their-key"]))
    assert redacted(["--llm-api-key=their-key"]) == ["--llm-api-key=***"]


@pytest.mark.parametrize(
    "argv",
    [["--llm-base-url", "http://127.0.0.1:9/v1"], ["--llm-model", "their-model"]],
)
def test_an_endpoint_needs_both_url_and_model(argv: list[str]) -> None:
    with pytest.raises(SystemExit) as refused:
        parse_args(argv)
    assert refused.value.code == 2
    assert parse_args([]).endpoint is None  # the oracle, as before


def test_summary_counts_an_inconclusive_case_as_wrong() -> None:
    label = {"label_type": "UpdateError", "label_op": "op-1", "system": "s", "latency": 0.1}
    records = [
        {**label, "status": "attributed", "error_type": "UpdateError", "op_id": "op-1"},
        {**label, "status": "inconclusive", "error_type": None, "op_id": None},
        {**label, "status": "attributed", "error_type": "UpdateError", "op_id": "op-2"},
    ]
    s = summarize(records, wall_s=1.5)
    assert (s["type_accuracy"], s["op_accuracy"], s["cases_per_s"]) == (0.6667, 0.3333, 2.0)
    assert s["status"] == {"attributed": 2, "inconclusive": 1}


def test_attributed_precision_coverage_and_the_type_matrix() -> None:
    label = {"label_type": "UpdateError", "label_op": "op-1"}
    records: list[Record] = [
        {**label, "status": "attributed", "error_type": "UpdateError", "op_id": "op-1"},
        {**label, "status": "attributed", "error_type": "RetrievalError", "op_id": "op-2"},
        {**label, "status": "inconclusive", "error_type": None, "op_id": None},
        {**label, "status": "inconclusive", "error_type": "UpdateError", "op_id": "op-1"},
    ]
    assert attributed_quality(records) == {"precision": 0.5, "coverage": 0.5}
    header, row = confusion_matrix(records)
    assert header.split() == [
        "Extraction",
        "Update",
        "Deletion",
        "Retrieval",
        "Response",
        "inconclusive",
        "op",
    ]
    assert row.split() == ["UpdateError", "0", "2", "0", "1", "0", "1", "2/4"]


@pytest.mark.skipif(
    not (REPO_ROOT / "../shared/data/locomo10").exists(), reason="LoCoMo data not present"
)
def test_locomo_oracle_follows_the_citations() -> None:
    from benchmarks.datasets import load_locomo
    from benchmarks.datasets.locomo import holds

    item = load_locomo(conversations=[conversation_files(None)[0].stem])[0]
    oracle = Oracle.of([item])
    units = batch_units(item.batch)
    by_type: dict[str, int] = {}
    for truth in oracle.by_case.values():
        kinds = {units[u]["kind"] for u in truth.carriers}
        evidence = item.hidden["evidence"][truth.case_id]
        assert any(units[u].get("attributes", {}).get("dia_id") == evidence for u in truth.carriers)
        label = truth.label["error_type"]
        by_type[label] = by_type.get(label, 0) + 1
        if label == "ExtractionError":
            assert kinds == {"message"}
        else:
            assert "memory" in kinds
            # a memory carries the fact when it cites the evidence or states the answer itself
            phrase = item.hidden["phrases"][truth.case_id]
            assert all(
                evidence in item.hidden["citations"][u] or holds(units[u]["content"], phrase)
                for u in truth.carriers
                if units[u]["kind"] == "memory"
            )
    assert set(by_type) == {"ExtractionError", "RetrievalError", "ResponseError"}
