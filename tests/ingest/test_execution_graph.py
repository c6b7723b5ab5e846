"""Importing MemTrace execution graphs (smartcomment ExecNetwork JSON); no database needed."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from memtrace_client.models import TraceBatch

from ingest.execution_graph import (
    ImportedGraph,
    convert_execution_graph,
    iter_graph_files,
    load_execution_graph,
    operation_kind,
    unit_kind,
)
from tests.support.execution_graphs import QUESTION, graph_edge, graph_node, graph_op, mem0_graph


def _write(tmp_path: Path, graph: dict[str, Any], name: str = "graph.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(graph))
    return path


def _import(tmp_path: Path, graph: dict[str, Any], **kwargs: Any) -> ImportedGraph:
    path = _write(tmp_path, graph)
    imported = convert_execution_graph(
        load_execution_graph(path), "bench-mem0", source=path, **kwargs
    )
    TraceBatch.model_validate(imported.batch)
    return imported


def _units(imported: ImportedGraph) -> dict[str, dict[str, Any]]:
    return {u["id"]: u for u in imported.batch["units"]}


def _ops(imported: ImportedGraph) -> dict[str, dict[str, Any]]:
    return {o["id"]: o for o in imported.batch["operations"]}


def test_mem0_graph_validates_as_a_trace_batch(tmp_path: Path) -> None:
    imported = _import(tmp_path, mem0_graph())
    batch = TraceBatch.model_validate(imported.batch)
    assert batch.project == "bench-mem0"
    # the judge's response is an internal step of the judge operation, not a unit
    assert (len(batch.units), len(batch.operations), len(batch.cases)) == (13, 5, 1)


def test_nodes_become_units_with_kinds_times_and_memory_ids(tmp_path: Path) -> None:
    units = _units(_import(tmp_path, mem0_graph()))
    kinds = {uid: u["kind"] for uid, u in units.items()}
    assert kinds == {
        "message:msg_1@1": "message",
        "message:msg_2@1": "message",
        "prompt:extract_prompt@1": "prompt",
        "facts:facts_1@1": "other",  # llm_response is not an answer: only predictions are
        "memory_entry:mem_1@1": "memory",
        "memory_entry:mem_2@1": "memory",
        "memory_entry:mem_1@2": "memory",
        "memory_entry:mem_2@2": "tombstone",
        "query:q_1@1": "query",
        "context:retrieved_1@1": "context",
        "prediction:pred_1@1": "answer",
        "golden_answers:gold_1@1": "other",
        "judge_score:score_1@1": "other",
    }
    first, second = units["memory_entry:mem_1@1"], units["memory_entry:mem_1@2"]
    assert first["attributes"]["memory_id"] == second["attributes"]["memory_id"]
    assert first["attributes"]["memory_id"] == "memory_entry:mem_1"
    assert units["memory_entry:mem_2@2"]["attributes"]["memory_id"] == "memory_entry:mem_2"
    assert "memory_id" not in units["message:msg_1@1"]["attributes"]  # only memory entries
    assert units["message:msg_1@1"]["attributes"]["variable"] == "message:msg_1"
    assert second["attributes"] | {"metadata": None} == {
        "variable": "memory_entry:mem_1",
        "memory_id": "memory_entry:mem_1",
        "name": "mem_1",
        "version": 2,
        "class_name": "memory_entry",
        "category": "memory_entry",
        "session_id": "s1",
        "metadata": None,
    }
    assert second["content"] == "Lives in Berlin"
    assert json.loads(units["facts:facts_1@1"]["content"]) == {
        "facts": ["Lives in Berlin", "Hates jazz"]
    }
    parsed = TraceBatch.model_validate({"units": [units["memory_entry:mem_1@2"]]}).units[0]
    assert parsed.ts == datetime(2025, 3, 1, 10, 0, 2, 200_000, tzinfo=UTC)


def test_operations_get_kinds_and_ordered_inputs_and_outputs(tmp_path: Path) -> None:
    imported = _import(tmp_path, mem0_graph())
    assert [o["id"] for o in imported.batch["operations"]] == [
        "op-01",
        "op-02",
        "op-03",
        "op-04",
        "op-05",
    ]
    ops = _ops(imported)
    assert {k: o["kind"] for k, o in ops.items()} == {
        "op-01": "extraction",
        "op-02": "update",
        "op-03": "retrieval",
        "op-04": "response",
        "op-05": "evaluation",
    }
    extract = ops["op-01"]
    assert extract["name"] == "memory_system.extract_facts"
    assert extract["inputs"] == [
        "message:msg_1@1",
        "message:msg_2@1",
        "prompt:extract_prompt@1",
    ]
    assert extract["outputs"] == ["facts:facts_1@1"]
    assert extract["session_id"] == "s1"
    assert extract["attributes"] == {
        "category": "extraction",
        "comment": "memory_system.extract_facts ran",
        "metadata": {"llm": "gpt-4.1-mini"},
    }

    update = ops["op-02"]
    assert update["inputs"] == ["facts:facts_1@1"]
    # chain facts -> mem@1 -> mem@2: memory versions stay outputs (states of the store) even
    # when written and rewritten within one operation; edges in time order, ties in file order
    assert update["outputs"] == [
        "memory_entry:mem_2@1",
        "memory_entry:mem_1@1",
        "memory_entry:mem_1@2",
        "memory_entry:mem_2@2",
    ]
    assert "internal_steps" not in update["attributes"]
    events = [(e["edge_id"], e["category"]) for e in update["attributes"]["edges"]]
    assert events == [("e05", "ADD"), ("e04", "ADD"), ("e06", "UPDATE"), ("e07", "DELETE")]
    assert update["attributes"]["edges"][-1]["target"] == "memory_entry:mem_2@2"

    assert ops["op-03"]["inputs"] == ["query:q_1@1", "memory_entry:mem_1@2"]
    assert ops["op-04"]["outputs"] == ["prediction:pred_1@1"]
    assert ops["op-05"]["outputs"] == ["judge_score:score_1@1"]
    [step] = ops["op-05"]["attributes"]["internal_steps"]
    assert (step["id"], step["content"]) == ("judge_response:judge_1@1", '{"label": "WRONG"}')


def test_annotation_becomes_a_failed_case_and_labels_stay_out(tmp_path: Path) -> None:
    imported = _import(tmp_path, mem0_graph())
    [case] = imported.batch["cases"]
    assert case["id"] == "7"
    assert case["question"] == QUESTION
    assert case["expected_answer"] == "Berlin | in Berlin"
    assert case["verdict"] == "failed"
    assert case["answer_unit"] == "prediction:pred_1@1"
    # a variable name (no @version) resolves to its latest version; unknown ids are omitted
    assert case["evidence_units"] == ["message:msg_2@1", "memory_entry:mem_1@2"]
    assert case["attributes"]["judge_score"] == 0.0
    assert case["attributes"]["judge_operation"] == "op-05"
    assert case["attributes"]["answer_operation"] == "op-04"
    assert any("message:gone@1" in w for w in imported.warnings)

    assert imported.labels == {"7": {"error_type": "ResponseError", "operation_id": "op-04"}}
    text = json.dumps(imported.batch)
    for leaked in ("ResponseError", "final_error_type", "final_op_id"):
        assert leaked not in text


def test_judge_score_in_json_output_gives_passed(tmp_path: Path) -> None:
    graph = mem0_graph()
    nodes = graph["data"]["nodes"]
    graph["data"]["nodes"] = [n for n in nodes if n["class_name"] != "judge_score"]
    graph["data"]["edges"] = [e for e in graph["data"]["edges"] if e["edge_id"] != "e15"]
    judge = next(n for n in graph["data"]["nodes"] if n["class_name"] == "judge_response")
    judge["value"] = json.dumps({"judge_score": 1, "reason": "same city"})
    del graph["data"]["annotations"][0]["final_error_type"]
    del graph["data"]["annotations"][0]["final_op_id"]
    imported = _import(tmp_path, graph)
    assert imported.batch["cases"][0]["verdict"] == "passed"
    assert imported.labels == {}


def test_without_judge_or_answer_operations(tmp_path: Path) -> None:
    graph = mem0_graph()
    data = graph["data"]
    data["operations"] = [o for o in data["operations"] if o["op_id"] not in ("op-04", "op-05")]
    data["edges"] = [e for e in data["edges"] if e["op_id"] not in ("op-04", "op-05")]
    data["nodes"] = [n for n in data["nodes"] if n["class_name"] != "prediction"]
    second = dict(data["annotations"][0], query_id="8", query="Does Alice like jazz?")
    del second["final_error_type"]
    del second["final_op_id"]
    data["annotations"].append(second)
    imported = _import(tmp_path, graph)
    first, other = imported.batch["cases"]
    assert (first["verdict"], other["verdict"]) == ("failed", "unknown")
    units = _units(imported)
    assert first["answer_unit"] == "answer:7"
    assert units["answer:7"]["kind"] == "answer"
    assert units["answer:7"]["content"] == "Paris"
    assert any("no llm-judge operation" in w for w in imported.warnings)
    assert any("added answer unit 'answer:7'" in w for w in imported.warnings)


def test_missing_optional_fields_warn_and_still_convert(tmp_path: Path) -> None:
    graph = mem0_graph()
    data = graph["data"]
    del data["annotations"]
    del data["nodes"][0]["category"]
    del data["nodes"][1]["created_at"]
    del data["nodes"][2]["full_node_id"]  # rebuilt from class_name:name@version
    del data["operations"][0]["created_at"]
    del data["operations"][1]["op_name"]
    data["edges"].append(
        graph_edge("e99", "op-nope", "query:q_1@1", "context:retrieved_1@1", "09.0")
    )
    data["edges"].append(graph_edge("e98", "op-03", "memory_entry:ghost@1", "context:x@1", "03.6"))
    imported = _import(tmp_path, graph)
    warnings = "\n".join(imported.warnings)
    assert str(tmp_path / "graph.json") in imported.warnings[0]
    for expected in (
        "data.annotations is missing",
        "node 'message:msg_1@1': category is missing",
        "node 'message:msg_2@1': created_at is missing",
        "operation 'op-01': created_at is missing or unreadable; using its earliest edge",
        "operation 'op-02': op_name is missing",
        "unknown op_id 'op-nope'",
        "'memory_entry:ghost@1' is not in data.nodes",
    ):
        assert expected in warnings
    units, ops = _units(imported), _ops(imported)
    assert units["message:msg_1@1"]["kind"] == "other"
    assert "ts" not in units["message:msg_2@1"]
    assert "prompt:extract_prompt@1" in units
    assert ops["op-02"]["name"] == "op-02"
    assert ops["op-01"]["ts"] == "2025-03-01T10:00:01+00:00"
    assert ops["op-03"]["outputs"][-1] == "context:x@1"  # kept as a reference
    assert imported.batch["cases"] == []


def test_structurally_broken_files_raise_value_errors_naming_the_path(tmp_path: Path) -> None:
    no_data = _write(tmp_path, {"graph_id": "g"}, "no_data.json")
    with pytest.raises(ValueError, match=r"no_data\.json: missing the 'data' object"):
        convert_execution_graph(load_execution_graph(no_data), source=no_data)
    bad_nodes = _write(tmp_path, {"data": {"nodes": {"a": 1}}}, "bad_nodes.json")
    with pytest.raises(ValueError, match=r"bad_nodes\.json: data\.nodes must be a JSON array"):
        convert_execution_graph(load_execution_graph(bad_nodes), source=bad_nodes)
    bad_item = _write(tmp_path, {"data": {"nodes": [], "edges": [3]}}, "bad_item.json")
    with pytest.raises(ValueError, match=r"bad_item\.json: data\.edges\[0\] must be"):
        convert_execution_graph(load_execution_graph(bad_item), source=bad_item)
    not_json = tmp_path / "not_json.json"
    not_json.write_text("{oops")
    with pytest.raises(ValueError, match=r"not_json\.json: not valid JSON"):
        load_execution_graph(not_json)
    a_list = _write(tmp_path, [], "a_list.json")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"a_list\.json: an execution graph must be"):
        load_execution_graph(a_list)


def test_id_prefix_applies_to_units_operations_cases_and_labels(tmp_path: Path) -> None:
    imported = _import(tmp_path, mem0_graph(), id_prefix="mem0-locomo-0")
    case = imported.batch["cases"][0]
    assert case["id"] == "mem0-locomo-0:7"
    assert case["answer_unit"] == "mem0-locomo-0:prediction:pred_1@1"
    assert imported.labels == {
        "mem0-locomo-0:7": {"error_type": "ResponseError", "operation_id": "mem0-locomo-0:op-04"}
    }
    update = _ops(imported)["mem0-locomo-0:op-02"]
    assert update["inputs"] == ["mem0-locomo-0:facts:facts_1@1"]


def test_iter_graph_files(tmp_path: Path) -> None:
    b = _write(tmp_path, mem0_graph(), "b.json")
    a = _write(tmp_path, mem0_graph(), "a.json")
    (tmp_path / "notes.txt").write_text("x")
    assert list(iter_graph_files(tmp_path)) == [a, b]
    assert list(iter_graph_files(b)) == [b]
    with pytest.raises(FileNotFoundError):
        list(iter_graph_files(tmp_path / "missing"))


@pytest.mark.parametrize(
    ("category", "class_name", "value", "kind"),
    [
        ("message", "message", "hi", "message"),
        ("memory", "m", "x", "memory"),
        ("memory_entry", "m", "DELETED", "tombstone"),
        ("deletion", "m", "gone", "tombstone"),
        ("llm_response", "prediction", "x", "answer"),
        ("message & query", "query", "q?", "query"),
        ("something_new", "x", "x", "other"),
    ],
)
def test_unit_kind_table(category: str, class_name: str, value: str, kind: str) -> None:
    assert unit_kind(category, class_name, value) == kind


@pytest.mark.parametrize(
    ("category", "name", "kind"),
    [
        ("initialization", "memory_system.finalize_memory_unit", "extraction"),
        ("embedding", "memory_system.add_to_vector_store", "embedding"),
        ("retrieval", "agentic_final_rerank", "retrieval"),
        ("evaluation", "question-answering", "response"),
        ("evaluation", "llm-judge", "evaluation"),
        ("", "evermemos.boundary_detection", "other"),
    ],
)
def test_operation_kind_table(category: str, name: str, kind: str) -> None:
    assert operation_kind(category, name) == kind


class _CountingId(str):
    """A node id that counts the equality comparisons made with it."""

    compared = 0

    def __eq__(self, other: object) -> bool:
        _CountingId.compared += 1
        return str.__eq__(self, other)

    __hash__ = str.__hash__


def test_a_large_fan_in_converts_in_linear_steps() -> None:
    """One operation with thousands of edges: comparisons grow with the edges, not their square
    (a list-membership test per edge made an 80k-edge operation take 99 s on the event loop)."""
    n = 3_000
    sources = [_CountingId(f"message:m{i}@1") for i in range(n)]
    nodes = [
        graph_node("message", f"m{i}", 1, f"text {i}", "message", "00.000") for i in range(n)
    ] + [graph_node("memory_entry", "all", 1, "everything", "memory_entry", "01.000")]
    edges = [
        graph_edge(f"e{i}", "op-1", src, _CountingId("memory_entry:all@1"), "01.000")
        for i, src in enumerate(sources)
    ]
    graph = {
        "graph_id": "fan-in",
        "data": {
            "nodes": nodes,
            "edges": edges,
            "operations": [graph_op("op-1", "memory_system.add", "update", "01.000")],
            "sessions": [],
            "annotations": [],
        },
    }
    _CountingId.compared = 0
    imported = convert_execution_graph(graph)
    [op] = imported.batch["operations"]
    assert len(op["inputs"]) == n
    assert _CountingId.compared < 20 * n


FIXTURES = Path(__file__).parents[1] / "fixtures" / "smartcomment"
SAMPLE = (
    Path(__file__).parents[3] / "shared" / "data" / "smartcomment-sample" / "mem0_toy_graph.json"
)


def _real(name: str) -> ImportedGraph:
    path = SAMPLE if name == "sample" else FIXTURES / f"{name}.json"
    if not path.exists():
        pytest.skip(f"{path} is not on this machine")
    imported = convert_execution_graph(load_execution_graph(path), "p", source=path)
    TraceBatch.model_validate(imported.batch)
    return imported


@pytest.mark.parametrize("name", ["sample", "mem0", "naive_rag", "long_context", "evermemos"])
def test_real_exports_import_without_the_misreads(name: str) -> None:
    imported = _real(name)
    units, ops = _units(imported), _ops(imported)
    produced: dict[str, list[str]] = {}
    for op in ops.values():
        for out in op["outputs"]:
            produced.setdefault(out, []).append(op["kind"])
    for unit in units.values():
        attributes = unit["attributes"]
        # only memory entries are entries; no variable id starts with a colon
        assert ("memory_id" in attributes) == (unit["kind"] in ("memory", "tombstone"))
        assert not attributes.get("variable", "x").startswith(":")
        # repr-encoded strings are decoded
        assert not (unit["kind"] == "query" and unit["content"][:1] in "'\"")
        if unit["kind"] == "memory":  # a memory version is written by construction only
            assert "retrieval" not in produced.get(unit["id"], [])
            assert len(produced.get(unit["id"], [])) <= 1
    # answers are the QA predictions only, each written by one question-answering operation
    answers = [u for u in units.values() if u["kind"] == "answer"]
    assert answers and all(produced.get(u["id"]) == ["response"] for u in answers)
    assert not any(u["id"].startswith("answer:") for u in units.values())
    # every case is paired with its QA and judge operations and reads the graph's judge score
    for case in imported.batch["cases"]:
        assert case["answer_unit"] in units
        assert "judge_score" in case["attributes"]
        assert case["verdict"] == ("failed" if case["attributes"]["judge_score"] == 0 else "passed")
        assert case["id"] not in imported.labels or case["verdict"] == "failed"
    assert all(op.get("attributes", {}).get("session") for op in ops.values())
    assert not any("evidence ids not in the graph" in w for w in imported.warnings)


def test_sample_deletion_is_a_tombstone_of_the_deleted_memory() -> None:
    imported = _real("sample")
    units, ops = _units(imported), _ops(imported)
    [tombstone] = [u for u in units.values() if u["kind"] == "tombstone"]
    deleted = units[tombstone["attributes"]["deletes"]]
    assert tombstone["attributes"]["memory_id"] == deleted["attributes"]["memory_id"]
    assert deleted["attributes"]["memory_id"] == "memory-unit-9c2eaf97-670e-4566-9f72-20942aaa5060"
    deleter = ops["op-e36c6b4df71e4d70a0b81ed747fdecb2"]
    assert deleted["id"] in deleter["inputs"] and tombstone["id"] in deleter["outputs"]
    assert not any(u["attributes"].get("class_name") == "delete_marker" for u in units.values())
    # the LLM's intermediate steps are kept on the operation, not as units nothing reads
    steps = [s["class_name"] for s in deleter["attributes"]["internal_steps"]]
    assert steps == [
        "memory_update_task_instruction",
        "raw_memory_update_decision",
        "memory_update_decision_with_code_block_removing",
        "update_action",
    ]
    qa = ops["op-c32b5634a41446948064604c82add1f2"]
    assert [s["kind"] for s in qa["attributes"]["internal_steps"]] == ["context"]
    assert "op-3327eea71fad4bf38a4d97f1ed0539a0:retrieved" in qa["inputs"]


def test_evidence_by_variable_name_resolves_to_its_latest_version() -> None:
    graph = load_execution_graph(SAMPLE) if SAMPLE.exists() else pytest.skip("no sample")
    graph["data"]["annotations"][1]["source_evidence_ids"] = ["U0:D1:2"]
    imported = convert_execution_graph(graph)
    assert imported.batch["cases"][1]["evidence_units"] == ["U0:D1:2@1"]
