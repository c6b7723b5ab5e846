"""Execution graphs in the MemTrace paper's format (smartcomment ExecNetwork JSON), built in
code: ``mem0_graph`` is Mem0's classic pipeline with one wrong answer."""

from __future__ import annotations

from typing import Any


def graph_node(
    class_name: str,
    name: str,
    version: int,
    value: Any,
    category: str,
    at: str,
    **extra: Any,
) -> dict[str, Any]:
    return {
        "full_node_id": f"{class_name}:{name}@{version}",
        "class_name": class_name,
        "name": name,
        "version": version,
        "value": value,
        "category": category,
        "comment": "",
        "session_id": "s1",
        "created_at": f"2025-03-01 10:00:{at}",
        "metadata": {},
        **extra,
    }


def graph_op(op_id: str, name: str, category: str, at: str) -> dict[str, Any]:
    return {
        "op_id": op_id,
        "op_name": name,
        "category": category,
        "comment": f"{name} ran",
        "session_id": "s1",
        "created_at": f"2025-03-01 10:00:{at}",
        "metadata": {"llm": "gpt-4.1-mini"},
    }


def graph_edge(
    edge_id: str, op_id: str, src: str, dst: str, at: str, category: str = ""
) -> dict[str, Any]:
    return {
        "edge_id": edge_id,
        "op_id": op_id,
        "source_full_node_id": src,
        "target_full_node_id": dst,
        "category": category,
        "comment": "",
        "created_at": f"2025-03-01 10:00:{at}",
    }


QUESTION = "Where does Alice live?"


def mem0_graph() -> dict[str, Any]:
    """Mem0 classic: extract facts -> ADD/UPDATE/DELETE -> search -> answer -> judge (score 0)."""
    nodes = [
        graph_node("message", "msg_1", 1, "Alice: I moved to Paris in 2020.", "message", "00.000"),
        graph_node(
            "message", "msg_2", 1, "Alice: I live in Berlin now. I hate jazz.", "message", "00.100"
        ),
        graph_node("prompt", "extract_prompt", 1, "Extract facts as JSON.", "prompt", "00.200"),
        graph_node(
            "facts",
            "facts_1",
            1,
            {"facts": ["Lives in Berlin", "Hates jazz"]},
            "llm_response",
            "01.000",
        ),
        graph_node("memory_entry", "mem_1", 1, "Lives in Paris", "memory_entry", "02.000"),
        graph_node("memory_entry", "mem_2", 1, "Likes jazz", "memory_entry", "02.100"),
        graph_node("memory_entry", "mem_1", 2, "Lives in Berlin", "memory_entry", "02.200"),
        graph_node("memory_entry", "mem_2", 2, "DELETED", "memory_entry", "02.300"),
        graph_node("query", "q_1", 1, QUESTION, "message & query", "03.000"),
        graph_node("context", "retrieved_1", 1, "- Lives in Berlin", "retrieved_context", "03.500"),
        graph_node("prediction", "pred_1", 1, "Paris", "llm_response", "04.000"),
        graph_node("golden_answers", "gold_1", 1, "Berlin", "message", "04.100"),
        graph_node("judge_response", "judge_1", 1, '{"label": "WRONG"}', "llm_response", "05.000"),
        graph_node("judge_score", "score_1", 1, "0.0", "score", "05.100"),
    ]
    ops = [
        graph_op("op-01", "memory_system.extract_facts", "extraction", "01.000"),
        graph_op("op-02", "memory_system.update_memory_decision", "update", "02.000"),
        graph_op("op-03", "memory_system.search_vector_store", "retrieval", "03.500"),
        graph_op("op-04", "question-answering", "evaluation", "04.000"),
        graph_op("op-05", "llm-judge", "evaluation", "05.000"),
    ]
    edges = [
        graph_edge("e01", "op-01", "message:msg_1@1", "facts:facts_1@1", "01.000"),
        graph_edge("e02", "op-01", "message:msg_2@1", "facts:facts_1@1", "01.000"),
        graph_edge("e03", "op-01", "prompt:extract_prompt@1", "facts:facts_1@1", "01.000"),
        # listed out of time order: the converter sorts by created_at, then edge_id
        graph_edge(
            "e07", "op-02", "memory_entry:mem_2@1", "memory_entry:mem_2@2", "02.300", "DELETE"
        ),
        graph_edge(
            "e06", "op-02", "memory_entry:mem_1@1", "memory_entry:mem_1@2", "02.200", "UPDATE"
        ),
        graph_edge("e05", "op-02", "facts:facts_1@1", "memory_entry:mem_2@1", "02.000", "ADD"),
        graph_edge("e04", "op-02", "facts:facts_1@1", "memory_entry:mem_1@1", "02.000", "ADD"),
        graph_edge("e08", "op-03", "query:q_1@1", "context:retrieved_1@1", "03.500"),
        graph_edge("e09", "op-03", "memory_entry:mem_1@2", "context:retrieved_1@1", "03.500"),
        graph_edge("e10", "op-04", "query:q_1@1", "prediction:pred_1@1", "04.000"),
        graph_edge("e11", "op-04", "context:retrieved_1@1", "prediction:pred_1@1", "04.000"),
        graph_edge("e12", "op-05", "query:q_1@1", "judge_response:judge_1@1", "05.000"),
        graph_edge("e13", "op-05", "prediction:pred_1@1", "judge_response:judge_1@1", "05.000"),
        graph_edge("e14", "op-05", "golden_answers:gold_1@1", "judge_response:judge_1@1", "05.000"),
        graph_edge("e15", "op-05", "judge_response:judge_1@1", "judge_score:score_1@1", "05.100"),
    ]
    annotation = {
        "query_id": 7,
        "query": QUESTION,
        "golden_answers": ["Berlin", "in Berlin"],
        "prediction": "Paris",
        "source_evidence_ids": ["message:msg_2@1", "memory_entry:mem_1", "message:gone@1"],
        "final_error_type": "ResponseError",
        "final_op_id": "op-04",
    }
    return {
        "graph_id": "mem0-locomo-0",
        "user_id": "u",
        "project_id": "p",
        "created_at": "2025-03-01 09:59:59.000",
        "metadata": {"system": "mem0"},
        "data": {
            "nodes": nodes,
            "edges": edges,
            "operations": ops,
            "sessions": [{"session_id": "s1"}],
            "annotations": [annotation],
        },
    }
