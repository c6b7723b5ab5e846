"""The labelled evaluation datasets: valid batches, truthful labels, no leaked ground truth.

No network, no database. The LoCoMo tests read two conversations from ../shared/data/locomo10
and are skipped if that data is not there.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest
from memtrace_client.models import TraceBatch

from benchmarks.datasets import (
    APPLICABLE_ERRORS,
    ERROR_TYPES,
    KINDS_FOR_ERROR,
    SYSTEMS,
    LabelledBatch,
    generate_conversation,
    generate_synthetic,
    load_locomo,
)
from benchmarks.datasets.bm25 import BM25
from benchmarks.datasets.locomo import holds
from benchmarks.datasets.locomo_source import resolve_dir

LOCOMO_DIR = resolve_dir(None)
LOCOMO_SAMPLE = ["26", "30"]
NEUTRAL_ID = re.compile(r"^(u|op|case)-[0-9a-f]{6}-\d{6}$")
DIA_ID = re.compile(r"D\d+:\d+")
needs_locomo = pytest.mark.skipif(not LOCOMO_DIR.is_dir(), reason="LoCoMo data not available")


@pytest.fixture(scope="module")
def synthetic() -> list[LabelledBatch]:
    return generate_synthetic(seed=7, n_conversations=2)


@pytest.fixture(scope="module")
def locomo() -> list[LabelledBatch]:
    if not LOCOMO_DIR.is_dir():
        pytest.skip("LoCoMo data not available")
    return load_locomo(conversations=LOCOMO_SAMPLE)


@pytest.fixture(params=["synthetic", "locomo"])
def dataset(request: pytest.FixtureRequest) -> list[LabelledBatch]:
    batches: list[LabelledBatch] = request.getfixturevalue(request.param)
    return batches


class _Graph:
    """Indexes of one batch, for the checks below."""

    def __init__(self, item: LabelledBatch) -> None:
        self.units = {u["id"]: u for u in item.batch["units"]}
        self.ops = {o["id"]: o for o in item.batch["operations"]}
        self.cases = {c["id"]: c for c in item.batch["cases"]}
        self.producer = {out: o for o in self.ops.values() for out in o["outputs"]}

    def text(self, unit_ids: list[str]) -> str:
        return "\n".join(self.units[u]["content"] for u in unit_ids)

    def response_op(self, case_id: str) -> dict[str, Any]:
        op = self.producer[self.cases[case_id]["answer_unit"]]
        assert op["kind"] == "response"
        return op


def test_batches_validate_and_are_closed(dataset: list[LabelledBatch]) -> None:
    for item in dataset:
        model = TraceBatch.model_validate(item.batch)
        assert model.cases and model.operations
        graph = _Graph(item)
        assert len(graph.units) == len(item.batch["units"]), "duplicate unit ids"
        assert len(graph.ops) == len(item.batch["operations"]), "duplicate operation ids"
        for op in item.batch["operations"]:
            assert set(op["inputs"]) | set(op["outputs"]) <= graph.units.keys()
        times = [op.ts for op in model.operations]
        assert times == sorted(times) and len(set(times)) == len(times), "ops not in time order"
        for case in item.batch["cases"]:
            assert case["answer_unit"] in graph.units
            assert set(case["evidence_units"]) <= graph.units.keys()


def test_labels_point_at_operations_of_the_right_kind(dataset: list[LabelledBatch]) -> None:
    for item in dataset:
        graph = _Graph(item)
        assert item.labels.keys() <= graph.cases.keys()
        for case_id, case in graph.cases.items():
            assert (case["verdict"] == "failed") == (case_id in item.labels)
        for label in item.labels.values():
            op = graph.ops[label["operation_id"]]
            assert op["kind"] in KINDS_FOR_ERROR[label["error_type"]], (label, op["name"])
            assert op["system"] == label["system"]


def test_no_ground_truth_in_batches(dataset: list[LabelledBatch]) -> None:
    for item in dataset:
        serialized = json.dumps(item.batch)
        for name in ERROR_TYPES:
            assert name not in serialized
        for kind in ("units", "operations", "cases"):
            assert all(NEUTRAL_ID.match(x["id"]) for x in item.batch[kind])


def test_every_applicable_error_type_appears_per_system(synthetic: list[LabelledBatch]) -> None:
    for system in SYSTEMS:
        batches = [x for x in synthetic if x.system == system]
        types = {label["error_type"] for x in batches for label in x.labels.values()}
        assert types == set(APPLICABLE_ERRORS[system]), system
        verdicts = {c["verdict"] for x in batches for c in x.batch["cases"]}
        assert verdicts == {"failed", "passed"}
        with_evidence = [bool(c["evidence_units"]) for x in batches for c in x.batch["cases"]]
        assert 0.3 < sum(with_evidence) / len(with_evidence) < 0.7


def test_synthetic_batches_reveal_nothing_by_wording(synthetic: list[LabelledBatch]) -> None:
    for item in synthetic:
        serialized = json.dumps(item.batch).lower()
        for word in ("error", "fault", "inject", "corrupt", "label", "ground", "decisive"):
            assert word not in serialized, word


def test_synthetic_faults_are_what_the_labels_say(synthetic: list[LabelledBatch]) -> None:
    """Follow the critical fact (hidden statement) through the labelled operation."""
    for item in synthetic:
        graph = _Graph(item)
        for case_id, case in graph.cases.items():
            fact = item.hidden["facts"][case_id]
            response = graph.response_op(case_id)
            context = graph.text(response["inputs"])
            answer = graph.text(response["outputs"])
            label = item.labels.get(case_id)
            if label is None:
                assert fact in context and answer == case["expected_answer"]
                continue
            assert case["expected_answer"] not in answer
            op = graph.ops[label["operation_id"]]
            error = label["error_type"]
            if error == "ResponseError":
                assert op is response and fact in context
            elif error == "RetrievalError":
                assert fact not in graph.text(op["outputs"]) and fact not in context
                stored = [u for u in graph.units.values() if u["kind"] in ("memory", "other")]
                assert any(fact in u["content"] for u in stored)
                if any(graph.units[u]["kind"] == "context" for u in op["inputs"]):
                    assert fact in graph.text(op["inputs"]), "a later stage than the one at fault"
            else:
                assert fact in graph.text(op["inputs"]), error
                assert fact not in graph.text(op["outputs"]), error
                if error == "DeletionError":
                    assert [graph.units[u]["kind"] for u in op["outputs"]] == ["tombstone"]


def test_synthetic_is_deterministic() -> None:
    first = generate_conversation("mem0", seed=3, n_distractors=30)
    again = generate_conversation("mem0", seed=3, n_distractors=30)
    other = generate_conversation("mem0", seed=4, n_distractors=30)
    assert json.dumps(first.batch) == json.dumps(again.batch)
    assert first.labels == again.labels
    assert json.dumps(first.batch) != json.dumps(other.batch)


def test_synthetic_size_is_configurable() -> None:
    small = generate_conversation("naive_rag", n_sessions=2, n_distractors=0, n_questions=4)
    large = generate_conversation("mem0", n_sessions=30, n_distractors=1500)
    assert len(small.batch["operations"]) < 60
    assert len(large.batch["operations"]) > 1000
    TraceBatch.model_validate(large.batch)
    with pytest.raises(ValueError):
        generate_conversation("mem0", n_sessions=1)


@needs_locomo
def test_locomo_labels_follow_the_hidden_citations(locomo: list[LabelledBatch]) -> None:
    for item in locomo:
        graph = _Graph(item)
        citations: dict[str, list[str]] = item.hidden["citations"]
        cited = {d for cites in citations.values() for d in cites}
        memories = [u["content"] for u in graph.units.values() if u["kind"] == "memory"]
        for case_id in graph.cases:
            evidence = item.hidden["evidence"][case_id]
            # Redundancy: a memory stating the answer itself carries it as well as a citing one.
            phrase = item.hidden["phrases"][case_id]
            response = graph.response_op(case_id)
            retrieval = graph.producer[response["inputs"][1]]
            citing = [
                u
                for u in retrieval["inputs"]
                if evidence in citations.get(u, []) or holds(graph.units[u]["content"], phrase)
            ]
            label = item.labels.get(case_id)
            if evidence not in cited and not any(holds(m, phrase) for m in memories):
                assert label is not None and label["error_type"] == "ExtractionError"
                op = graph.ops[label["operation_id"]]
                message = next(
                    graph.units[u]
                    for u in op["inputs"]
                    if graph.units[u]["attributes"]["dia_id"] == evidence
                )
                assert message["content"].startswith(op["attributes"]["speaker"] + ": ")
            elif not citing:
                assert label is not None and label["error_type"] == "RetrievalError"
                assert label["operation_id"] == retrieval["id"]
            elif label is not None:
                assert label["error_type"] == "ResponseError"
                assert label["operation_id"] == response["id"]
            else:
                assert graph.text(response["outputs"]) == graph.units[citing[0]]["content"]


@needs_locomo
def test_locomo_hides_the_citations(locomo: list[LabelledBatch]) -> None:
    for item in locomo:
        batch = copy.deepcopy(item.batch)
        for unit in batch["units"]:
            if unit["kind"] == "message":
                assert DIA_ID.fullmatch(unit["attributes"].pop("dia_id"))
        assert not DIA_ID.search(json.dumps(batch))


@needs_locomo
def test_locomo_covers_the_answerable_questions(locomo: list[LabelledBatch]) -> None:
    types = {label["error_type"] for x in locomo for label in x.labels.values()}
    assert types == {"ExtractionError", "RetrievalError", "ResponseError"}
    for item in locomo:
        raw = json.loads((LOCOMO_DIR / f"{item.hidden['conversation']}.json").read_text())
        answerable = [
            q
            for q in raw["qa"]
            if q["category"] != 5 and len(DIA_ID.findall(" ".join(q["evidence"]))) == 1
        ]
        assert len(item.batch["cases"]) == len(answerable)
        assert {c["verdict"] for c in item.batch["cases"]} == {"failed", "passed"}


@needs_locomo
def test_locomo_is_deterministic_and_ignores_cwd(
    locomo: list[LabelledBatch], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    again = load_locomo(conversations=["30"])
    first = next(x for x in locomo if x.hidden["conversation"] == "30")
    assert json.dumps(again[0].batch) == json.dumps(first.batch)
    assert again[0].labels == first.labels


def test_bm25_ranks_matching_documents_first() -> None:
    docs = ["Alice moved to Lisbon in 2021.", "Bob likes tea.", "Alice likes tea and Lisbon."]
    index = BM25(docs)
    assert index.rank("Where did Alice move? lisbon 2021")[0] == 0
    assert index.rank("tea")[-1] == 0
    assert index.scores("unknown words") == [0.0, 0.0, 0.0]
