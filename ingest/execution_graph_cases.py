"""Annotations of an execution graph as cases, paired with the operations that answered and
judged them.

MemBase's question-answering and ``llm-judge`` operations carry no ``query_id``: they read the
query variable, whose name is the query id (``query:<query_id>@<version>``) and whose value is the
question, sometimes prefixed with the speaker or followed by the question's time. An annotation
is paired with an operation, in this order, by: the operation's ``metadata.query_id`` or
``metadata.query``; a query input named after the query id; a query input whose text is the
question or contains it; the only such operation when the graph has one annotation.

- id = ``query_id``; question = ``query``; expected answer = ``golden_answers`` joined with
  `` | ``;
- answer unit = the prediction of the paired question-answering operation, else a prediction
  node with the annotation's text, else a new ``answer`` unit holding it (with a warning);
- verdict = from the paired judge's own ``judge_score`` output (``failed`` when it is 0, else
  ``passed``); without one, ``failed`` if the annotation names an error type, else ``unknown``;
- ``final_error_type`` and ``final_op_id`` never enter the batch: they are the labels.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from ingest.execution_graph_state import GraphState, Op, text
from ingest.execution_graph_values import as_number, is_judge_name, is_qa_name

MAX_TEXT = 100_000
_SCORE_IN_TEXT = re.compile(r"judge_score[\"']?\s*[:=]\s*[\"']?(-?[0-9]+(?:\.[0-9]+)?)")


def _norm(value: str) -> str:
    return " ".join(value.split()).lower()


class _Pairing:
    """Finds the operation (answering or judging) about one annotation; linear to build."""

    def __init__(self, conv: GraphState, matches: Callable[[str], bool]) -> None:

        self.conv = conv
        self.ops = [
            op
            for op in conv.sorted_ops()
            if op.category.lower() in ("evaluation", "response", "") and matches(op.name)
        ]
        self.by_id: dict[str, Op] = {}
        self.by_text: dict[str, Op] = {}
        self.texts: list[tuple[str, Op]] = []
        for op in self.ops:  # later operations win: a re-run answers last
            metadata = op.raw.get("metadata")
            if isinstance(metadata, Mapping):
                if text(metadata.get("query_id")):
                    self.by_id[text(metadata.get("query_id"))] = op
                if text(metadata.get("query")):
                    self.by_text[_norm(text(metadata.get("query")))] = op
            for unit_id in op.inputs:
                node = conv.by_wire.get(unit_id)
                if node is None or node.kind != "query":
                    continue
                self.by_id[node.name] = op
                self.by_text[_norm(node.content)] = op
                self.texts.append((_norm(node.content), op))

    def find(self, query_id: str, question: str, single: bool) -> Op | None:
        if query_id and query_id in self.by_id:
            return self.by_id[query_id]
        wanted = _norm(question)
        if wanted and wanted in self.by_text:
            return self.by_text[wanted]
        if wanted:
            found = [op for said, op in self.texts if wanted in said or (said and said in wanted)]
            if found:
                return found[-1]
        if single and len(self.ops) == 1:
            return self.ops[0]
        return None


def convert_annotations(conv: GraphState) -> tuple[list[dict[str, Any]], dict[str, dict[str, str]]]:
    """The cases and, by case id, the labels of the converter's annotations."""
    answering = _Pairing(conv, is_qa_name)
    judging = _Pairing(conv, is_judge_name)
    single = len(conv.annotations) == 1
    cases: list[dict[str, Any]] = []
    labels: dict[str, dict[str, str]] = {}
    seen: set[str] = set()
    for index, annotation in enumerate(conv.annotations):
        if not isinstance(annotation, dict):
            raise conv.broken(f"data.annotations[{index}] must be a JSON object")
        case = _case(conv, index, annotation, answering, judging, single)
        if case["id"] in seen:
            conv.warn(f"annotation {index}: duplicate case id {case['id']!r}; skipped")
            continue
        seen.add(case["id"])
        cases.append(case)
        label = _label(conv, index, annotation)
        if label is not None:
            labels[case["id"]] = label
    return cases, labels


def _case(
    conv: GraphState,
    index: int,
    annotation: Mapping[str, Any],
    answering: _Pairing,
    judging: _Pairing,
    single: bool,
) -> dict[str, Any]:

    query_id = text(annotation.get("query_id"))
    if not query_id:
        query_id = f"annotation-{index}"
        conv.warn(f"annotation {index}: query_id is missing; case id {query_id!r}")
    question = text(annotation.get("query"))
    if not question:
        conv.warn(f"annotation {query_id!r}: query is missing")
    golden = annotation.get("golden_answers")
    if golden is None:
        conv.warn(f"annotation {query_id!r}: golden_answers is missing")
    expected = " | ".join(text(g) for g in golden) if isinstance(golden, list) else text(golden)
    qa_op = answering.find(query_id, question, single)
    judge_op = judging.find(query_id, question, single)
    attributes: dict[str, Any] = {"query_id": annotation.get("query_id", query_id)}
    if conv.graph_id:
        attributes["graph_id"] = conv.graph_id
    case: dict[str, Any] = {
        "id": conv.make_id(query_id),
        "question": question[:MAX_TEXT],
        "expected_answer": expected[:MAX_TEXT],
        "verdict": _verdict(conv, query_id, annotation, judge_op, attributes),
    }
    if qa_op is not None:
        attributes["answer_operation"] = qa_op.id
    answer = _answer_unit(conv, query_id, annotation, qa_op)
    if answer is not None:
        case["answer_unit"] = answer
    evidence = _evidence(conv, query_id, annotation.get("source_evidence_ids"))
    if evidence:
        case["evidence_units"] = evidence
    case["attributes"] = attributes
    return case


def _verdict(
    conv: GraphState,
    query_id: str,
    annotation: Mapping[str, Any],
    judge_op: Op | None,
    attributes: dict[str, Any],
) -> str:
    if judge_op is None:
        conv.warn(f"annotation {query_id!r}: no llm-judge operation found for this query")
    else:
        attributes["judge_operation"] = judge_op.id
        score = _judge_score(conv, judge_op)
        if score is not None:
            attributes["judge_score"] = score
            return "failed" if score == 0 else "passed"
        conv.warn(f"annotation {query_id!r}: judge operation {judge_op.raw_id!r} has no score")
    return "failed" if annotation.get("final_error_type") else "unknown"


def _judge_score(conv: GraphState, op: Op) -> float | None:
    """The ``judge_score`` this judge wrote (its own edge, since the score node is shared by
    every judge that gave the same score), or ``judge_score`` in its response's JSON or text."""

    written = [
        conv.nodes[t]
        for _, edge in op.edges
        if (t := text(edge.get("target_full_node_id"))) in conv.nodes
    ]
    for node in written:
        if node.class_name.lower() == "judge_score":
            score = as_number(node.parsed)
            if score is not None:
                return score
    for node in written:
        if isinstance(node.parsed, dict) and "judge_score" in node.parsed:
            return as_number(node.parsed["judge_score"])
        match = _SCORE_IN_TEXT.search(node.content)
        if match:
            return as_number(match.group(1))
    metadata = op.raw.get("metadata")
    return as_number(metadata.get("judge_score")) if isinstance(metadata, Mapping) else None


def _answer_unit(
    conv: GraphState, query_id: str, annotation: Mapping[str, Any], qa_op: Op | None
) -> str | None:
    prediction = annotation.get("prediction")
    said = None
    if prediction is not None:
        said = prediction if isinstance(prediction, str) else json.dumps(prediction)
    if qa_op is not None:
        outputs = [(uid, conv.by_wire.get(uid)) for uid in qa_op.outputs]
        for uid, node in outputs:
            if node is not None and node.kind == "answer":
                return uid
        if outputs:
            return outputs[0][0]
    if said is None:
        conv.warn(f"annotation {query_id!r}: no prediction and no answer operation found")
        return None
    for node in conv.nodes.values():
        if node.kind == "answer" and node.content.strip() == said.strip():
            return node.id
    unit_id = conv.make_id(f"answer:{query_id}")
    conv.warn(
        f"annotation {query_id!r}: no question-answering output found; "
        f"added answer unit {unit_id!r} from the prediction"
    )
    conv.extra_units.append(
        {
            "id": unit_id,
            "kind": "answer",
            "content": said[:1_000_000],
            "attributes": {"query_id": query_id, "from_annotation": True},
        }
    )
    return unit_id


def _evidence(conv: GraphState, query_id: str, raw: object) -> list[str]:
    """Evidence ids naming a node (``full_node_id`` or ``name@version``) or a variable (its
    latest version). Ids of nodes that are only an operation's internal step are omitted."""

    if raw is None:
        return []
    found: dict[str, None] = {}
    missing: list[str] = []
    for item in raw if isinstance(raw, list) else [raw]:
        key = text(item)
        node = conv.nodes.get(key) or conv.latest.get(key)
        internal = (
            node is not None
            and node.raw_id in conv.mentioned
            and (node.raw_id not in conv.pure_use)
        )
        if node is None or internal:
            missing.append(key)
        else:
            found.setdefault(node.id)
    if missing:
        conv.warn(f"annotation {query_id!r}: evidence ids not in the graph, omitted: {missing}")
    return list(found)


def _label(conv: GraphState, index: int, annotation: Mapping[str, Any]) -> dict[str, str] | None:

    error_type = text(annotation.get("final_error_type"))
    op_id = text(annotation.get("final_op_id"))
    if not (error_type or op_id):
        return None
    if not error_type:
        conv.warn(f"annotation {index}: final_op_id without final_error_type")
    if not op_id:
        conv.warn(f"annotation {index}: final_error_type without final_op_id")
    elif op_id not in conv.ops:
        conv.warn(f"annotation {index}: final_op_id {op_id!r} is not an operation of the graph")
    return {"error_type": error_type, "operation_id": conv.make_id(op_id) if op_id else ""}
