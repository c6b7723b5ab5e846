"""Score attribution on a MemTraceBench directory with the paper's two metrics.

    python -m benchmarks.attribution memtracebench PATH [--judge heuristic|llm] [--url URL]

Every graph file under PATH is imported (``POST /import/execution-graph``, one project per run,
ids prefixed by graph id), every labelled failed case is attributed, and the prediction is
compared with the annotation: error-type accuracy (``final_error_type``) and operation accuracy
(``final_op_id``, exact match), plus the cost per case (LLM calls, tokens, seconds). Without
``--url`` a throw-away local Neo4j and service are started. The dataset itself (Hugging Face
zjunlp/MemTraceBench) is not fetched: point PATH at a local copy (a folder of graph files).
"""

from __future__ import annotations

import argparse
import tempfile
import uuid
from collections import Counter
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx

from benchmarks.figures import save
from ingest.execution_graph import iter_graph_files, load_execution_graph
from tests.support.servers import fresh_neo4j, run_service


def import_directory(client: httpx.Client, path: Path, project: str) -> list[str]:
    """Import every graph under ``path``; the ids of the labelled cases."""
    labelled: list[str] = []
    for file in iter_graph_files(path):
        graph = load_execution_graph(file)
        prefix = str(graph.get("graph_id") or file.stem)[:64]
        response = client.post(
            "/import/execution-graph", params={"project": project, "id_prefix": prefix}, json=graph
        )
        response.raise_for_status()
    for case in client.get("/cases", params={"project": project, "limit": 10_000}).json():
        stored = client.get(f"/cases/{case['id']}", params={"project": project}).json()
        if "ground_truth" in stored["attributes"] and stored["verdict"] == "failed":
            labelled.append(case["id"])
    return labelled


def score(client: httpx.Client, project: str, case_ids: list[str], judge: str) -> dict[str, Any]:
    """Attribute each case and compare with its annotation."""
    rows = []
    for case_id in case_ids:
        truth = client.get(f"/cases/{case_id}", params={"project": project}).json()["attributes"][
            "ground_truth"
        ]
        result = client.post(
            f"/attribute/{case_id}",
            params={"project": project},
            json={"judge": judge, "refresh": True},
        ).json()
        predicted_op = (result.get("operation") or {}).get("id")
        rows.append(
            {
                "case_id": case_id,
                "label_type": truth["error_type"],
                "label_op": truth["operation_id"],
                "error_type": result.get("error_type"),
                "operation_id": predicted_op,
                "status": result["status"],
                "llm_calls": result["cost"]["llm_calls"],
                "input_tokens": result["cost"]["input_tokens"],
                "output_tokens": result["cost"]["output_tokens"],
                "seconds": result["cost"]["seconds"],
            }
        )
    n = len(rows) or 1
    by_type = Counter(r["label_type"] for r in rows)
    return {
        "cases": len(rows),
        "error_type_accuracy": round(sum(r["error_type"] == r["label_type"] for r in rows) / n, 3),
        "operation_accuracy": round(sum(r["operation_id"] == r["label_op"] for r in rows) / n, 3),
        "per_error_type": {
            t: round(
                sum(r["operation_id"] == r["label_op"] for r in rows if r["label_type"] == t)
                / count,
                3,
            )
            for t, count in sorted(by_type.items())
        },
        "mean_llm_calls": round(sum(r["llm_calls"] for r in rows) / n, 2),
        "mean_input_tokens": round(sum(r["input_tokens"] for r in rows) / n),
        "mean_output_tokens": round(sum(r["output_tokens"] for r in rows) / n),
        "mean_seconds": round(sum(r["seconds"] for r in rows) / n, 4),
        "rows": rows,
    }


def table(figures: dict[str, Any]) -> str:
    """The paper's two metrics and the cost per case, then one line per case."""
    lines = [
        f"cases: {figures['cases']}",
        f"error-type accuracy: {figures['error_type_accuracy']:.3f}",
        f"operation accuracy:  {figures['operation_accuracy']:.3f}",
        f"cost per case: {figures['mean_llm_calls']} LLM calls, "
        f"{figures['mean_input_tokens']} input / {figures['mean_output_tokens']} output tokens, "
        f"{figures['mean_seconds']} s",
        "",
        f"{'case':<48} {'annotated':<16} {'predicted':<16} {'op':<4} status",
    ]
    for r in figures["rows"]:
        same_op = "yes" if r["operation_id"] == r["label_op"] else "no"
        lines.append(
            f"{r['case_id'][-48:]:<48} {r['label_type']:<16} {r['error_type'] or '-':<16} "
            f"{same_op:<4} {r['status']}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("path", type=Path)
    parser.add_argument("--judge", default="heuristic", choices=["heuristic", "llm"])
    parser.add_argument("--url", help="a running service (default: start a throw-away one)")
    args = parser.parse_args(argv)
    project = f"memtracebench-{uuid.uuid4().hex[:8]}"
    with ExitStack() as stack:
        url = args.url
        if url is None:
            workdir = Path(stack.enter_context(tempfile.TemporaryDirectory()))
            local = stack.enter_context(fresh_neo4j())
            url = stack.enter_context(run_service(local.uri, workdir)).url
        client = stack.enter_context(httpx.Client(base_url=url, timeout=300))
        cases = import_directory(client, args.path, project)
        figures = score(client, project, cases, args.judge)
    print(table(figures))
    print(
        "written to",
        save("attribution_memtracebench", {"path": str(args.path), "judge": args.judge, **figures}),
    )
