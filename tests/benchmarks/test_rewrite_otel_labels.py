"""The OpenTelemetry shapes of the store-rewriting set (without and with Mem0's deciding call
traced): their spans become, through the service's own OTLP mapping, a trace whose labels point
at the spans made from the labelled operations and whose truth is the native batch's, read over
the new ids.

The checker reads the converted batch and the native one side by side and objects to any label
that does not sit on the span the native operation became; the last test moves labels and
expects it to object. No network, no database; skipped when ../shared/data/locomo10 is not there.
"""

from __future__ import annotations

from typing import Any

import pytest
from memtrace_client.models import TraceBatch

from benchmarks.attribution.accuracy import otel_batch
from benchmarks.attribution.oracle import Oracle
from benchmarks.datasets import LabelledBatch
from benchmarks.datasets.copies import NAMING_ATTRIBUTES
from benchmarks.datasets.labels import KINDS_FOR_ERROR
from benchmarks.datasets.locomo_source import resolve_dir
from benchmarks.datasets.rewrite import load_rewrite
from benchmarks.datasets.rewrite_otel import DECIDING

SAMPLE = ("26", "44")  # one conversation of each half
pytestmark = pytest.mark.skipif(not resolve_dir(None).is_dir(), reason="LoCoMo data not available")


@pytest.fixture(scope="module", params=["rewrite-otel", DECIDING])
def shape(request: pytest.FixtureRequest) -> str:
    """Without and with Mem0's deciding call (its searches and its JSON answer) traced."""
    return str(request.param)


@pytest.fixture(scope="module")
def pairs(shape: str) -> list[tuple[LabelledBatch, LabelledBatch]]:
    return [
        (item, otel_batch(item, shape))
        for item in load_rewrite(shape="rewrite", conversations=SAMPLE)
    ]


def _span(op: dict[str, Any]) -> tuple[str, str]:
    otel = op["attributes"]["otel"]
    return otel["trace_id"], otel["name"]


def label_problems(native: LabelledBatch, otel: LabelledBatch) -> list[str]:
    """Every converted label that is not on the span its native operation became; [] when all
    are."""
    n_units = {u["id"]: u for u in native.batch["units"]}
    n_ops = {o["id"]: o for o in native.batch["operations"]}
    units = {u["id"]: u for u in otel.batch["units"]}
    ops = {o["id"]: o for o in otel.batch["operations"]}
    answered_by = {out: o for o in otel.batch["operations"] for out in o["outputs"]}
    problems = []
    for case in otel.batch["cases"]:
        label = otel.labels.get(case["id"])
        if label is None:
            continue
        native_label = native.labels[case["id"]]
        op, was = ops.get(label["operation_id"]), n_ops[native_label["operation_id"]]
        kind = label["error_type"]
        if (
            op is None
            or kind != native_label["error_type"]
            or op["kind"] not in KINDS_FOR_ERROR[kind]
        ):
            problems.append(f"{case['id']}: {kind} on {op and op['kind']}")
            continue
        outputs = [units[u] for u in op["outputs"]]
        answer_op = answered_by[case["answer_unit"]]
        if kind == "ExtractionError":
            turns = {n_units[u]["content"] for u in was["inputs"]}
            read = {units[u]["content"] for u in op["inputs"] if units[u]["kind"] == "message"}
            ok = _span(op)[1] == "chat extract_facts" and read == turns
        elif kind == "UpdateError":
            written = {n_units[u]["content"] for u in was["outputs"]}
            ok = _span(op)[1] == "update_memory" and {u["content"] for u in outputs} == written
        elif kind == "DeletionError":
            stones = {
                n_units[u]["attributes"]["memory_id"]
                for u in was["outputs"]
                if n_units[u]["kind"] == "tombstone"
            }
            ok = (
                _span(op)[1] == "delete_memory"
                and {u["attributes"]["memory_id"].split(":", 1)[1] for u in outputs} == stones
            )
        elif kind == "RetrievalError":
            ok = _span(op) == (_span(answer_op)[0], "search_memory")
        else:
            ok = op is answer_op
        if not ok:
            problems.append(f"{case['id']}: {kind} not on the span its operation became")
    return problems


def carrier_problems(native: LabelledBatch, otel: LabelledBatch) -> list[str]:
    """Where the carried-over truth disagrees with the label: the evidence turn carries; an
    ExtractionError has no memory that carried; a RetrievalError a memory but no context of its
    answer; a ResponseError a context of its answer."""
    n_units = {u["id"]: u for u in native.batch["units"]}
    units = {u["id"]: u for u in otel.batch["units"]}
    answered_by = {out: o for o in otel.batch["operations"] for out in o["outputs"]}
    truth = Oracle.of([otel]).by_case
    problems = []
    for case_id, label in otel.labels.items():
        carriers = truth[(otel.batch["project"], case_id)].carriers
        hint = n_units[native.hidden["hints"][case_id][0]]["content"]
        case = next(c for c in otel.batch["cases"] if c["id"] == case_id)
        contexts = set(answered_by[case["answer_unit"]]["inputs"])
        kinds = {units[u]["kind"] for u in carriers}
        if not any(units[u]["kind"] == "message" and units[u]["content"] == hint for u in carriers):
            problems.append(f"{case_id}: the evidence turn is not a carrier")
        kind = label["error_type"]
        if (kind == "ExtractionError") == ("memory" in kinds):
            problems.append(f"{case_id}: {kind} with memory carriers {kinds}")
        if (kind == "ResponseError") != bool(carriers & contexts):
            problems.append(f"{case_id}: {kind}, its answer read carriers {carriers & contexts}")
    return problems


def test_every_label_sits_on_the_span_of_its_operation(
    pairs: list[tuple[LabelledBatch, LabelledBatch]],
) -> None:
    for native, otel in pairs:
        assert otel.hidden["unmapped"] == len(native.labels) - len(otel.labels)
        assert len(otel.labels) >= 0.95 * len(native.labels)
        assert label_problems(native, otel) == []
        assert carrier_problems(native, otel) == []


def test_the_batch_is_what_the_otlp_endpoint_writes(
    pairs: list[tuple[LabelledBatch, LabelledBatch]], shape: str
) -> None:
    types = set()
    for native, otel in pairs:
        TraceBatch.model_validate(otel.batch)
        assert all(o["id"].startswith("otel:") for o in otel.batch["operations"])
        assert not any(o.get("session_id") for o in otel.batch["operations"])
        assert not any(
            key in NAMING_ATTRIBUTES
            for x in (*otel.batch["units"], *otel.batch["operations"])
            for key in (x.get("attributes") or {})
        )
        failed = {c["id"] for c in otel.batch["cases"] if c["verdict"] == "failed"}
        assert failed == set(otel.labels)
        assert otel.hidden["half"] == native.hidden["half"]
        types |= {label["error_type"] for label in otel.labels.values()}
    assert types == set(KINDS_FOR_ERROR)
    again = otel_batch(load_rewrite(shape="rewrite", conversations=SAMPLE[:1])[0], shape)
    assert again.batch == pairs[0][1].batch, "the conversion is not deterministic"


def test_the_checkers_catch_a_moved_label(
    pairs: list[tuple[LabelledBatch, LabelledBatch]],
) -> None:
    native, otel = pairs[0]
    ops = [o["id"] for o in otel.batch["operations"]]
    for kind in KINDS_FOR_ERROR:
        case, label = next((c, x) for c, x in otel.labels.items() if x["error_type"] == kind)
        earlier = ops[ops.index(label["operation_id"]) - 1]
        other = "ResponseError" if kind != "ResponseError" else "ExtractionError"
        for wrong in ({**label, "operation_id": earlier}, {**label, "error_type": other}):
            moved = LabelledBatch(otel.batch, {**otel.labels, case: wrong}, otel.hidden)  # type: ignore[dict-item]
            assert label_problems(native, moved) + carrier_problems(native, moved), (
                f"a moved {kind} label went unnoticed"
            )
