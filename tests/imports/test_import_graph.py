"""Importing MemTraceBench execution graphs through the running service and the CLI."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import httpx
import pytest

from tests.support.cli import memtrace
from tests.support.execution_graphs import mem0_graph
from tests.support.servers import ServiceHandle


def write_graphs(folder: Path, *graph_ids: str) -> None:
    """One copy of the Mem0-shaped test graph per id, as ``<id>.json`` in ``folder``."""
    for graph_id in graph_ids:
        graph = mem0_graph()
        graph["graph_id"] = graph_id
        (folder / f"{graph_id}.json").write_text(json.dumps(graph))


def test_import_lands_cases_with_ground_truth(client: httpx.Client, project: str) -> None:
    params = {"project": project, "id_prefix": "g1"}
    response = client.post("/import/execution-graph", params=params, json=mem0_graph())
    assert response.status_code == 200, response.text
    result = response.json()
    assert result["ingested"]["created"]["operations"] > 0
    assert result["labelled_cases"] == 1
    [case] = client.get("/cases", params={"project": project}).json()
    assert case["id"].startswith("g1:")
    stored = client.get(f"/cases/{case['id']}", params={"project": project}).json()
    truth = stored["attributes"]["ground_truth"]
    assert truth["operation_id"].startswith("g1:op-")
    assert stored["verdict"] == "failed"
    again = client.post("/import/execution-graph", params=params, json=mem0_graph()).json()
    assert again["ingested"]["created"] == {"units": 0, "operations": 0, "cases": 0}
    attribution = client.post(f"/attribute/{case['id']}", params={"project": project}).json()
    assert attribution["case_id"] == case["id"]
    assert attribution["status"] in {"attributed", "inconclusive", "unanswerable"}


def test_broken_graph_is_422(client: httpx.Client, project: str) -> None:
    graph = copy.deepcopy(mem0_graph())
    graph["data"]["nodes"] = "not a list"
    response = client.post("/import/execution-graph", params={"project": project}, json=graph)
    assert response.status_code == 422
    assert "nodes" in response.json()["message"]


def test_cli_imports_a_folder_without_id_collisions(
    service: ServiceHandle, project: str, tmp_path: Path
) -> None:
    write_graphs(tmp_path, "graph-a", "graph-b")
    done = memtrace("import-graph", str(tmp_path), "--project", project, "--url", service.url)
    assert done.returncode == 0, done.stderr
    assert "2 graph(s)" in done.stdout
    assert "2 labelled" in done.stdout
    cases = httpx.get(f"{service.url}/cases", params={"project": project}).json()
    assert sorted(c["id"].split(":")[0] for c in cases) == ["graph-a", "graph-b"]


def test_memtracebench_scoring_on_a_directory(
    service: ServiceHandle, project: str, tmp_path: Path
) -> None:
    from benchmarks.attribution.memtracebench import import_directory, score

    write_graphs(tmp_path, "graph-a", "graph-b")
    with httpx.Client(base_url=service.url, timeout=120) as client:
        cases = import_directory(client, tmp_path, project)
        figures = score(client, project, cases, "heuristic")
    assert sorted(c.split(":")[0] for c in cases) == ["graph-a", "graph-b"]
    assert figures["cases"] == 2
    # The two graphs are the same, so each metric is 0, 0.5 or 1 and both rows agree.
    first, second = figures["rows"]
    assert (first["error_type"], first["operation_id"].split(":", 1)[1]) == (
        second["error_type"],
        second["operation_id"].split(":", 1)[1],
    )
    expected = sum(r["operation_id"] == r["label_op"] for r in figures["rows"]) / 2
    assert figures["operation_accuracy"] == expected
    assert {r["label_type"] for r in figures["rows"]} == {"ResponseError"}


def test_deeply_nested_node_value_is_422_naming_it(client: httpx.Client, project: str) -> None:
    graph = mem0_graph()
    graph["data"]["nodes"][3]["value"] = "@nested@"
    nested = '{"v": ' * 950 + '"deep"' + "}" * 950  # written by hand: json.dumps would overflow
    body = json.dumps(graph).replace('"@nested@"', nested)
    response = client.post(
        "/import/execution-graph",
        params={"project": project},
        content=body,
        headers={"content-type": "application/json"},
    )
    assert response.status_code == 422, response.text
    assert "data.nodes[3].value" in response.json()["message"]


@pytest.mark.parametrize("stamp", ["0001-01-01T00:00:00+05:00", "9999-12-31T23:59:59-05:00"])
def test_timestamp_out_of_range_is_422_naming_it(
    client: httpx.Client, project: str, stamp: str
) -> None:
    graph = mem0_graph()
    graph["data"]["nodes"][2]["created_at"] = stamp
    response = client.post("/import/execution-graph", params={"project": project}, json=graph)
    assert response.status_code == 422, response.text
    assert "data.nodes[2].created_at" in response.json()["message"]


def test_infinite_version_is_422_naming_it(client: httpx.Client, project: str) -> None:
    body = json.dumps(mem0_graph()).replace('"version": 2', '"version": 1e400', 1)
    assert "1e400" in body
    response = client.post(
        "/import/execution-graph",
        params={"project": project},
        content=body,
        headers={"content-type": "application/json"},
    )
    assert response.status_code == 422, response.text
    assert ".version" in response.json()["message"]


FIXTURES = Path(__file__).parents[1] / "fixtures" / "smartcomment"
SAMPLE = Path(__file__).parents[3] / "shared" / "data" / "smartcomment-sample"


@pytest.mark.parametrize("folder", [FIXTURES, SAMPLE], ids=["fixtures", "shared-sample"])
def test_real_smartcomment_graphs_are_attributed_exactly(
    service: ServiceHandle, project: str, folder: Path
) -> None:
    """Every annotated failure of the four system shapes (and the shared sample) is blamed on
    the annotated operation with the annotated type: both paper metrics are 1.0."""
    from benchmarks.attribution.memtracebench import import_directory, score

    if not folder.exists():
        pytest.skip(f"{folder} is not on this machine")
    with httpx.Client(base_url=service.url, timeout=120) as client:
        cases = import_directory(client, folder, project)
        figures = score(client, project, cases, "heuristic")
        verdicts = [c["verdict"] for c in client.get("/cases", params={"project": project}).json()]
    expected_types = (
        {"ExtractionError", "UpdateError", "DeletionError", "RetrievalError", "ResponseError"}
        if folder == FIXTURES
        else {"ExtractionError", "UpdateError", "DeletionError"}
    )
    assert {r["label_type"] for r in figures["rows"]} == expected_types
    wrong = [
        r
        for r in figures["rows"]
        if (r["error_type"], r["operation_id"]) != (r["label_type"], r["label_op"])
    ]
    assert wrong == []
    assert (figures["error_type_accuracy"], figures["operation_accuracy"]) == (1.0, 1.0)
    assert all(r["status"] == "attributed" for r in figures["rows"])
    if folder == FIXTURES:  # the sample annotates failures only
        assert "passed" in verdicts  # judged correct by the graph's own judge_score
