"""Convert a MemTrace execution graph (smartcomment ``ExecNetwork`` export) into a trace batch.

One JSON object per graph: ``{graph_id, created_at, metadata, data: {nodes, edges, operations,
sessions, annotations}}`` (MemTraceBench's format). The conversion is pure: it returns a
``TraceBatch``-shaped dict, the benchmark's ground-truth labels kept apart from it, and warnings.

Units. Each node (a variable version) becomes a unit with id ``full_node_id``
(``"<class_name>:<name>@<version>"``), content = its value as text (JSON for non-strings),
ts = ``created_at`` read as UTC. Every unit carries
``attributes.memory_id = "<class_name>:<name>"``, shared by all versions of one variable.
Kind, first rule that applies:

- value ``"DELETED"`` (the deletion marker) -> ``tombstone``
- class_name ``query`` -> ``query``; ``prediction`` -> ``answer``;
  ``judge_score``, ``judge_response``, ``golden_answers`` -> ``other`` (evaluation bookkeeping)
- category (lower case): see ``UNIT_KINDS``; anything else -> ``other``

Operations. Each operation keeps ``op_id`` and ``op_name``; kind from its category
(``OPERATION_KINDS``, unknown -> ``other``), except that an evaluation operation named like
``question-answering`` is the step that produced the answer and becomes ``response``.
Inputs and outputs come from that operation's edges, taken in order of (edge ``created_at``,
``edge_id``): sources that are no edge's target are inputs; every target is an output, in order
of first appearance. A node in the middle of a chain within one operation (both a source and a
target) is therefore an output too, and is also listed in ``attributes.intermediate_units``.
Edges with a category or comment (Mem0's ADD/UPDATE/DELETE, say) are kept in ``attributes.edges``.

Cases come from ``annotations``: id = ``query_id``, question = ``query``, expected answer =
``golden_answers`` joined with `` | ``. The verdict comes from the judge operation for the query
(an evaluation operation named like ``llm-judge``; see ``_Converter.find_op`` and
``_Converter.judge_score``): ``failed`` when its score is 0, else ``passed``. Without a judge
score, ``failed`` if the annotation names an error type, else ``unknown``. The answer unit is the
output of the matching question-answering operation, else a new ``answer`` unit holding the
prediction. ``final_error_type`` and ``final_op_id`` never enter the batch: they are returned as
``ImportedGraph.labels``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ingest.ids import MAX_ID, bounded_id

UNIT_KINDS: dict[str, str] = {
    "message": "message",
    "user_message": "message",
    "query": "query",
    "message & query": "query",
    "question": "query",
    "memory_entry": "memory",
    "memory": "memory",
    "memory_unit": "memory",
    "memcell": "memory",
    "fact": "memory",
    "context": "context",
    "retrieved_context": "context",
    "retrieval_result": "context",
    "search_result": "context",
    "prompt": "prompt",
    "system_prompt": "prompt",
    "llm_response": "answer",
    "response": "answer",
    "answer": "answer",
    "prediction": "answer",
    "deleted": "tombstone",
    "deletion": "tombstone",
    "tombstone": "tombstone",
}

UNIT_CLASS_KINDS: dict[str, str] = {
    "query": "query",
    "prediction": "answer",
    "judge_score": "other",
    "judge_response": "other",
    "golden_answers": "other",
}

OPERATION_KINDS: dict[str, str] = {
    "ingest": "ingest",
    "ingestion": "ingest",
    "extraction": "extraction",
    "initialization": "extraction",
    "update": "update",
    "deletion": "deletion",
    "delete": "deletion",
    "embedding": "embedding",
    "retrieval": "retrieval",
    "response": "response",
    "generation": "response",
    "evaluation": "evaluation",
}

DELETED_MARKER = "DELETED"
MAX_CONTENT = 1_000_000
MAX_TEXT = 100_000
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_SCORE_IN_TEXT = re.compile(r"judge_score[\"']?\s*[:=]\s*[\"']?(-?[0-9]+(?:\.[0-9]+)?)")


@dataclass
class ImportedGraph:
    """A converted graph: the batch to send, the held-out labels by case id, and warnings."""

    batch: dict[str, Any]
    labels: dict[str, dict[str, str]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


def load_execution_graph(path: str | Path) -> dict[str, Any]:
    """Read one graph file; a ValueError naming the path if it is not a JSON object."""
    p = Path(path)
    try:
        data = json.loads(p.read_bytes())
    except json.JSONDecodeError as e:
        raise ValueError(f"{p}: not valid JSON at line {e.lineno}: {e.msg}") from e
    if not isinstance(data, dict):
        raise ValueError(f"{p}: an execution graph must be a JSON object")
    return data


def iter_graph_files(path: str | Path) -> Iterator[Path]:
    """The ``*.json`` files of a directory, sorted by name, or the file itself."""
    p = Path(path)
    if p.is_dir():
        yield from sorted(c for c in p.glob("*.json") if c.is_file())
    elif p.is_file():
        yield p
    else:
        raise FileNotFoundError(f"{p}: no such file or directory")


def convert_execution_graph(
    graph: Mapping[str, Any],
    project: str = "default",
    *,
    source: str | Path = "<graph>",
    id_prefix: str | None = None,
) -> ImportedGraph:
    """Convert one execution-graph object; ``source`` names it in errors and warnings.

    ``id_prefix`` (e.g. the graph id) is prepended as ``"<prefix>:"`` to every unit, operation
    and case id, for projects that hold several graphs whose node ids or query ids repeat (":"
    rather than "/", so that ids stay usable in paths such as ``/cases/{id}``).
    """
    return _Converter(graph, project, str(source), id_prefix).run()


def parse_timestamp(value: object) -> datetime | None:
    """``"YYYY-MM-DD HH:MM:SS.sss"`` (or ISO 8601, or epoch seconds) as UTC; None if unreadable."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        try:
            return datetime.fromtimestamp(value, tz=UTC)
        except (OverflowError, OSError, ValueError):
            return None
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip()
    if text.endswith("Z"):
        text = text[:-1] + "+00:00"
    try:
        ts = datetime.fromisoformat(text)
    except ValueError:
        return None
    return ts.replace(tzinfo=UTC) if ts.tzinfo is None else ts.astimezone(UTC)


def value_text(value: object) -> str:
    """A node value as unit content: strings verbatim, None empty, anything else as JSON."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def unit_kind(category: str, class_name: str, content: str) -> str:
    """The unit kind of a node (see the module docstring for the order of the rules)."""
    if content.strip() == DELETED_MARKER:
        return "tombstone"
    by_class = UNIT_CLASS_KINDS.get(class_name.strip().lower())
    if by_class is not None:
        return by_class
    return UNIT_KINDS.get(category.strip().lower(), "other")


def operation_kind(category: str, name: str) -> str:
    """The operation kind of an operation: by category, question answering as ``response``."""
    kind = OPERATION_KINDS.get(category.strip().lower(), "other")
    if kind == "evaluation" and _is_qa_name(name):
        return "response"
    return kind


def _is_qa_name(name: str) -> bool:
    n = name.lower().replace("_", "-")
    return "question-answering" in n or n.endswith("answer-question") or n == "qa"


def _is_judge_name(name: str) -> bool:
    return "judge" in name.lower()


def _text(value: object) -> str:
    if isinstance(value, str):
        return value
    return "" if value is None else str(value)


@dataclass
class _Node:
    id: str
    raw_id: str
    memory_id: str
    class_name: str
    content: str
    kind: str
    ts: datetime | None
    version: int


@dataclass
class _Op:
    id: str
    raw_id: str
    name: str
    category: str
    kind: str
    ts: datetime | None
    raw: Mapping[str, Any]
    edges: list[Mapping[str, Any]] = field(default_factory=list)
    inputs: list[str] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)
    middles: list[str] = field(default_factory=list)


class _Converter:
    def __init__(
        self, graph: Mapping[str, Any], project: str, source: str, id_prefix: str | None
    ) -> None:
        self.graph = graph
        self.project = project
        self.source = source
        self.prefix = f"{id_prefix}:" if id_prefix else ""
        self.warnings: list[str] = []
        self.nodes: dict[str, _Node] = {}
        self.node_units: list[dict[str, Any]] = []
        self.ops: dict[str, _Op] = {}
        self.extra_units: list[dict[str, Any]] = []

    # -- helpers -----------------------------------------------------------------------------

    def warn(self, message: str) -> None:
        self.warnings.append(f"{self.source}: {message}")

    def broken(self, message: str) -> ValueError:
        return ValueError(f"{self.source}: {message}")

    def make_id(self, raw: str) -> str:
        """A wire id: prefixed, and shortened with a hash suffix when it exceeds 256 characters."""
        full = self.prefix + raw
        short = bounded_id(full)
        if short != full:
            self.warn(
                f"id {raw[:60]!r}... is longer than {MAX_ID} characters, shortened to {short!r}"
            )
        return short

    def list_field(self, data: Mapping[str, Any], key: str) -> list[Any]:
        value = data.get(key)
        if value is None:
            self.warn(f"data.{key} is missing; treated as empty")
            return []
        if not isinstance(value, list):
            raise self.broken(f"data.{key} must be a JSON array, not {type(value).__name__}")
        for index, item in enumerate(value):
            if not isinstance(item, dict):
                raise self.broken(f"data.{key}[{index}] must be a JSON object")
        return value

    def unit_ref(self, raw: str) -> str:
        node = self.nodes.get(raw)
        return node.id if node else self.make_id(raw)

    # -- conversion --------------------------------------------------------------------------

    def run(self) -> ImportedGraph:
        if not isinstance(self.graph, Mapping):
            raise self.broken("an execution graph must be a JSON object")
        data = self.graph.get("data")
        if not isinstance(data, Mapping):
            raise self.broken("missing the 'data' object (data.nodes, data.edges, ...)")
        self.graph_id = _text(self.graph.get("graph_id")) or None
        if self.graph_id is None:
            self.warn("graph_id is missing")
        self.graph_ts = parse_timestamp(self.graph.get("created_at"))
        raw_nodes = self.list_field(data, "nodes")
        raw_ops = self.list_field(data, "operations")
        raw_edges = self.list_field(data, "edges")
        annotations = data.get("annotations")
        if annotations is None:
            annotations = []
            self.warn("data.annotations is missing; no cases")
        elif not isinstance(annotations, list):
            raise self.broken("data.annotations must be a JSON array")

        for index, raw in enumerate(raw_nodes):
            self.add_node(index, raw)
        for index, raw in enumerate(raw_ops):
            self.add_operation(index, raw)
        self.attach_edges(raw_edges)
        operations = [self.operation_dict(op) for op in self.sorted_ops()]
        cases: list[dict[str, Any]] = []
        labels: dict[str, dict[str, str]] = {}
        seen_cases: set[str] = set()
        for index, annotation in enumerate(annotations):
            if not isinstance(annotation, dict):
                raise self.broken(f"data.annotations[{index}] must be a JSON object")
            case = self.case(index, annotation)
            if case["id"] in seen_cases:
                self.warn(f"annotation {index}: duplicate case id {case['id']!r}; skipped")
                continue
            seen_cases.add(case["id"])
            cases.append(case)
            label = self.label(index, annotation)
            if label is not None:
                labels[case["id"]] = label

        batch = {
            "project": self.project,
            "units": self.node_units + self.extra_units,
            "operations": operations,
            "cases": cases,
        }
        return ImportedGraph(batch=batch, labels=labels, warnings=self.warnings)

    def add_node(self, index: int, raw: Mapping[str, Any]) -> None:
        class_name = _text(raw.get("class_name"))
        name = _text(raw.get("name"))
        version = raw.get("version")
        raw_id = _text(raw.get("full_node_id"))
        if not raw_id:
            if not (class_name and name and version is not None):
                self.warn(f"node {index}: no full_node_id and no class_name/name/version; skipped")
                return
            raw_id = f"{class_name}:{name}@{version}"
        elif not (class_name and name) and ":" in raw_id:
            class_name, _, rest = raw_id.partition(":")
            name = rest.rsplit("@", 1)[0]
        if raw_id in self.nodes:
            self.warn(f"node {index}: duplicate id {raw_id!r}; kept the first")
            return
        memory_id = f"{class_name}:{name}" if class_name or name else raw_id.rsplit("@", 1)[0]
        content = value_text(raw.get("value"))
        if len(content) > MAX_CONTENT:
            self.warn(f"node {raw_id!r}: value truncated to {MAX_CONTENT} characters")
            content = content[:MAX_CONTENT]
        category = _text(raw.get("category"))
        if not category:
            self.warn(f"node {raw_id!r}: category is missing")
        ts = parse_timestamp(raw.get("created_at"))
        if ts is None:
            self.warn(f"node {raw_id!r}: created_at is missing or unreadable")
        try:
            version_number = int(version) if version is not None else 0
        except (TypeError, ValueError):
            version_number = 0
        node = _Node(
            id=self.make_id(raw_id),
            raw_id=raw_id,
            memory_id=memory_id,
            class_name=class_name,
            content=content,
            kind=unit_kind(category, class_name, content),
            ts=ts,
            version=version_number,
        )
        self.nodes[raw_id] = node
        attributes: dict[str, Any] = {"memory_id": memory_id}
        for key in ("name", "version", "class_name", "category", "comment", "session_id"):
            if raw.get(key) not in (None, ""):
                attributes[key] = raw[key]
        if raw.get("metadata"):
            attributes["metadata"] = raw["metadata"]
        unit: dict[str, Any] = {"id": node.id, "kind": node.kind, "content": content}
        if ts is not None:
            unit["ts"] = ts.isoformat()
        unit["attributes"] = attributes
        self.node_units.append(unit)

    def add_operation(self, index: int, raw: Mapping[str, Any]) -> None:
        raw_id = _text(raw.get("op_id"))
        if not raw_id:
            self.warn(f"operation {index}: op_id is missing; skipped (its edges are dropped)")
            return
        if raw_id in self.ops:
            self.warn(f"operation {raw_id!r}: duplicate op_id; kept the first")
            return
        name = _text(raw.get("op_name"))
        if not name:
            self.warn(f"operation {raw_id!r}: op_name is missing; named after its id")
            name = raw_id
        category = _text(raw.get("category"))
        if not category:
            self.warn(f"operation {raw_id!r}: category is missing")
        self.ops[raw_id] = _Op(
            id=self.make_id(raw_id),
            raw_id=raw_id,
            name=name[:MAX_ID],
            category=category,
            kind=operation_kind(category, name),
            ts=parse_timestamp(raw.get("created_at")),
            raw=raw,
        )

    def attach_edges(self, raw_edges: list[Mapping[str, Any]]) -> None:
        for index, edge in enumerate(raw_edges):
            op_id = _text(edge.get("op_id"))
            src = _text(edge.get("source_full_node_id"))
            dst = _text(edge.get("target_full_node_id"))
            label = _text(edge.get("edge_id")) or f"#{index}"
            if not (src and dst):
                self.warn(f"edge {label}: source or target missing; skipped")
                continue
            op = self.ops.get(op_id)
            if op is None:
                self.warn(f"edge {label}: unknown op_id {op_id!r}; skipped")
                continue
            for end in (src, dst):
                if end not in self.nodes:
                    self.warn(
                        f"edge {label}: node {end!r} is not in data.nodes; kept as a reference"
                    )
            op.edges.append(edge)
        for op in self.ops.values():
            op.edges.sort(key=_edge_key)
            sources = {_text(e.get("source_full_node_id")) for e in op.edges}
            targets = {_text(e.get("target_full_node_id")) for e in op.edges}
            for edge in op.edges:
                src = _text(edge.get("source_full_node_id"))
                dst = _text(edge.get("target_full_node_id"))
                if src not in targets and src not in op.inputs:
                    op.inputs.append(src)
                if dst not in op.outputs:
                    op.outputs.append(dst)
                    if dst in sources:
                        op.middles.append(dst)
            if op.ts is None:
                edge_times = [t for e in op.edges if (t := parse_timestamp(e.get("created_at")))]
                op.ts = min(edge_times) if edge_times else self.graph_ts
                fallback = "its earliest edge" if edge_times else "the graph's created_at"
                if op.ts is None:
                    fallback = "1970-01-01 UTC"
                self.warn(
                    f"operation {op.raw_id!r}: created_at is missing or unreadable; "
                    f"using {fallback}"
                )

    def sorted_ops(self) -> list[_Op]:
        return sorted(self.ops.values(), key=lambda o: (o.ts or _EPOCH, o.raw_id))

    def operation_dict(self, op: _Op) -> dict[str, Any]:
        attributes: dict[str, Any] = {}
        for key in ("category", "comment", "metadata"):
            if op.raw.get(key) not in (None, "", {}):
                attributes[key] = op.raw[key]
        if op.middles:
            attributes["intermediate_units"] = [self.unit_ref(n) for n in op.middles]
        edge_notes = [
            {
                k: v
                for k, v in (
                    ("edge_id", e.get("edge_id")),
                    ("source", self.unit_ref(_text(e.get("source_full_node_id")))),
                    ("target", self.unit_ref(_text(e.get("target_full_node_id")))),
                    ("category", e.get("category")),
                    ("comment", e.get("comment")),
                )
                if v not in (None, "")
            }
            for e in op.edges
            if e.get("category") or e.get("comment")
        ]
        if edge_notes:
            attributes["edges"] = edge_notes
        result: dict[str, Any] = {
            "id": op.id,
            "name": op.name,
            "kind": op.kind,
            "ts": (op.ts or _EPOCH).isoformat(),
            "inputs": [self.unit_ref(n) for n in op.inputs],
            "outputs": [self.unit_ref(n) for n in op.outputs],
            "attributes": attributes,
        }
        session = op.raw.get("session_id")
        if session not in (None, ""):
            result["session_id"] = _text(session)[:MAX_ID]
        return result

    # -- cases -------------------------------------------------------------------------------

    def case(self, index: int, annotation: Mapping[str, Any]) -> dict[str, Any]:
        query_id = _text(annotation.get("query_id"))
        if not query_id:
            query_id = f"annotation-{index}"
            self.warn(f"annotation {index}: query_id is missing; case id {query_id!r}")
        case_id = self.make_id(query_id)
        question = _text(annotation.get("query"))
        if not question:
            self.warn(f"annotation {query_id!r}: query is missing")
        golden = annotation.get("golden_answers")
        if isinstance(golden, list):
            expected = " | ".join(_text(g) for g in golden)
        else:
            expected = _text(golden)
        if golden is None:
            self.warn(f"annotation {query_id!r}: golden_answers is missing")
        qa_op = self.find_op(query_id, question, annotation, _is_qa_name)
        judge_op = self.find_op(query_id, question, annotation, _is_judge_name)
        attributes: dict[str, Any] = {"query_id": annotation.get("query_id", query_id)}
        if self.graph_id:
            attributes["graph_id"] = self.graph_id
        verdict = self.verdict(query_id, annotation, judge_op, attributes)
        case: dict[str, Any] = {
            "id": case_id,
            "question": question[:MAX_TEXT],
            "expected_answer": expected[:MAX_TEXT],
            "verdict": verdict,
        }
        answer = self.answer_unit(query_id, annotation, qa_op)
        if qa_op is not None:
            attributes["answer_operation"] = qa_op.id
        if answer is not None:
            case["answer_unit"] = answer
        evidence = self.evidence(query_id, annotation.get("source_evidence_ids"))
        if evidence:
            case["evidence_units"] = evidence
        case["attributes"] = attributes
        return case

    def find_op(
        self,
        query_id: str,
        question: str,
        annotation: Mapping[str, Any],
        name_matches: Callable[[str], bool],
    ) -> _Op | None:
        """The evaluation operation (by name) about this query.

        It matches when its metadata names the query (``query_id`` or ``query``), or one of its
        nodes is a query whose value is the question; failing that, the only such operation in a
        graph with a single annotation.
        """
        candidates = [
            op
            for op in self.sorted_ops()
            if op.category.lower() in ("evaluation", "response", "") and name_matches(op.name)
        ]
        for op in candidates:
            metadata = op.raw.get("metadata")
            if isinstance(metadata, Mapping):
                if _text(metadata.get("query_id")) == query_id and query_id:
                    return op
                if question and _text(metadata.get("query")).strip() == question.strip():
                    return op
            for raw in op.inputs:
                node = self.nodes.get(raw)
                if (
                    node is not None
                    and node.kind == "query"
                    and question
                    and node.content.strip() == question.strip()
                ):
                    return op
        if len(candidates) == 1 and self.single_annotation:
            return candidates[0]
        return None

    @property
    def single_annotation(self) -> bool:
        data = self.graph.get("data")
        anns = data.get("annotations") if isinstance(data, Mapping) else None
        return isinstance(anns, list) and len(anns) == 1

    def verdict(
        self,
        query_id: str,
        annotation: Mapping[str, Any],
        judge_op: _Op | None,
        attributes: dict[str, Any],
    ) -> str:
        score = self.judge_score(judge_op) if judge_op is not None else None
        if judge_op is not None:
            attributes["judge_operation"] = judge_op.id
        if score is not None:
            attributes["judge_score"] = score
            return "failed" if score == 0 else "passed"
        if judge_op is None:
            self.warn(f"annotation {query_id!r}: no llm-judge operation found for this query")
        else:
            self.warn(f"annotation {query_id!r}: judge operation {judge_op.raw_id!r} has no score")
        return "failed" if annotation.get("final_error_type") else "unknown"

    def judge_score(self, op: _Op) -> float | None:
        """A ``judge_score`` node's value, or ``judge_score`` in an output's JSON or text."""
        nodes = [self.nodes[n] for n in op.outputs if n in self.nodes]
        for node in nodes:
            if node.class_name.lower() == "judge_score":
                score = _as_float(node.content)
                if score is not None:
                    return score
        for node in nodes:
            score = _score_in(node.content)
            if score is not None:
                return score
        metadata = op.raw.get("metadata")
        if isinstance(metadata, Mapping):
            return _as_float(metadata.get("judge_score"))
        return None

    def answer_unit(
        self, query_id: str, annotation: Mapping[str, Any], qa_op: _Op | None
    ) -> str | None:
        prediction = annotation.get("prediction")
        text = value_text(prediction) if prediction is not None else None
        if qa_op is not None:
            outputs = [self.nodes[n] for n in qa_op.outputs if n in self.nodes]
            wanted = (text or "").strip()
            for node in (
                [n for n in outputs if n.class_name.lower() == "prediction"]
                + [n for n in outputs if text is not None and n.content.strip() == wanted]
                + [n for n in outputs if n.kind == "answer"]
            ):
                return node.id
            if outputs:
                return outputs[0].id
        if text is None:
            self.warn(f"annotation {query_id!r}: no prediction and no answer operation found")
            return None
        for node in self.nodes.values():
            if node.class_name.lower() == "prediction" and node.content.strip() == text.strip():
                return node.id
        unit_id = self.make_id(f"answer:{query_id}")
        self.warn(
            f"annotation {query_id!r}: no question-answering output found; "
            f"added answer unit {unit_id!r} from the prediction"
        )
        self.extra_units.append(
            {
                "id": unit_id,
                "kind": "answer",
                "content": text[:MAX_CONTENT],
                "attributes": {"query_id": query_id, "from_annotation": True},
            }
        )
        return unit_id

    def evidence(self, query_id: str, raw: object) -> list[str]:
        """Evidence ids that name a node (``full_node_id``), or a variable (its latest version)."""
        if raw is None:
            return []
        items = raw if isinstance(raw, list) else [raw]
        latest: dict[str, _Node] = {}
        for node in self.nodes.values():
            best = latest.get(node.memory_id)
            if best is None or node.version >= best.version:
                latest[node.memory_id] = node
        found: list[str] = []
        missing: list[str] = []
        for item in items:
            key = _text(item)
            match = self.nodes.get(key) or latest.get(key)
            if match is None:
                missing.append(key)
            elif match.id not in found:
                found.append(match.id)
        if missing:
            self.warn(f"annotation {query_id!r}: evidence ids not in the graph, omitted: {missing}")
        return found

    def label(self, index: int, annotation: Mapping[str, Any]) -> dict[str, str] | None:
        error_type = _text(annotation.get("final_error_type"))
        op_id = _text(annotation.get("final_op_id"))
        if not (error_type or op_id):
            return None
        if not error_type:
            self.warn(f"annotation {index}: final_op_id without final_error_type")
        if not op_id:
            self.warn(f"annotation {index}: final_error_type without final_op_id")
        elif op_id not in self.ops:
            self.warn(f"annotation {index}: final_op_id {op_id!r} is not an operation of the graph")
        return {"error_type": error_type, "operation_id": self.make_id(op_id) if op_id else ""}


def _edge_key(edge: Mapping[str, Any]) -> tuple[bool, datetime, str]:
    ts = parse_timestamp(edge.get("created_at"))
    return (ts is None, ts or _EPOCH, _text(edge.get("edge_id")))


def _as_float(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None
    try:
        return float(value)
    except ValueError:
        return None


def _score_in(content: str) -> float | None:
    try:
        parsed = json.loads(content)
    except (json.JSONDecodeError, ValueError):
        parsed = None
    if isinstance(parsed, dict) and "judge_score" in parsed:
        return _as_float(parsed["judge_score"])
    match = _SCORE_IN_TEXT.search(content)
    return float(match.group(1)) if match else None
