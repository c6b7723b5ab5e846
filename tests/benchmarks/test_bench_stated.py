"""The benchmark's split of cases by what their labelled carriers say (benchmarks/attribution/
stated.py): a class follows from the labels and the units' text alone."""

from __future__ import annotations

from benchmarks.attribution.oracle import CaseTruth, Oracle
from benchmarks.attribution.stated import by_statement, statement_classes
from benchmarks.datasets import LabelledBatch


def _batch() -> LabelledBatch:
    units = [
        {"id": "m1", "kind": "message", "content": "Jon: I got mentored by a business dude!"},
        {"id": "f1", "kind": "memory", "content": "Jon got mentored by a business person."},
        {"id": "f2", "kind": "memory", "content": "Jon was mentored on 15 June 2023."},
    ]
    cases = [
        {"id": "c-stated", "question": "When was Jon mentored?", "expected_answer": "15 June 2023"},
        {"id": "c-unstated", "question": "When was Jon mentored?", "expected_answer": "15 June"},
        {"id": "c-lost", "question": "When was Jon mentored?", "expected_answer": "15 June 2023"},
    ]
    batch = {"project": "p", "units": units, "operations": [], "cases": cases}
    return LabelledBatch(batch, {})


def _truth(case: str, carriers: set[str]) -> CaseTruth:
    label = {"error_type": "RetrievalError", "operation_id": "op", "system": "s"}
    return CaseTruth(case, "p", label, frozenset(carriers), ())  # type: ignore[arg-type]


def test_a_case_is_classed_by_whether_its_kept_carriers_state_the_answer() -> None:
    oracle = Oracle(
        by_case={
            ("p", "c-stated"): _truth("c-stated", {"m1", "f1", "f2"}),
            ("p", "c-unstated"): _truth("c-unstated", {"m1", "f1"}),
            ("p", "c-lost"): _truth("c-lost", {"m1"}),  # only the message: never kept
        }
    )
    classes = statement_classes([_batch()], oracle)
    assert classes == {
        ("p", "c-stated"): "stated",
        ("p", "c-unstated"): "unstated",
        ("p", "c-lost"): "never kept",
    }
    records = [
        {"project": "p", "case_id": "c-stated", "op_id": "op", "label_op": "op"},
        {"project": "p", "case_id": "c-unstated", "op_id": "other", "label_op": "op"},
    ]
    assert by_statement(records, classes) == "stated 1/1 = 1.000  unstated 0/1 = 0.000"
