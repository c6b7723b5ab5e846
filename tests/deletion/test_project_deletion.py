"""``DELETE /project`` cut short: the project is marked before anything goes, so a deletion a
crash stopped half way leaves a project that reads as gone (404), takes no writes (409) and is
listed as being deleted, until ``DELETE /project`` run again finishes it. Each step seeks the
project's nodes by index: no plan scans every node of the store."""

from __future__ import annotations

import re
from typing import Any

import httpx
import pytest
from neo4j import Driver

from cypher import query
from graph_schema.labels import NODE_LABELS
from service.deletion.repository import PROJECT_STEPS
from tests.support.traces import DEMO_TRUTH, demo_batch


def count_nodes(driver: Driver, project: str) -> int:
    """The project's data nodes (not its deletion mark)."""
    records = driver.execute_query(
        "MATCH (n {project: $p}) WHERE NOT n:ProjectDeletion RETURN count(n) AS n", p=project
    ).records
    return int(records[0]["n"])


def cut_short(driver: Driver, project: str) -> None:
    """What a crash after the deletion's first transactions leaves: the mark, then one batch of
    the first step (the very statements DELETE /project runs, in its order), and nothing more."""
    driver.execute_query(query("deletion/project/begin"), project=project)
    driver.execute_query(query(PROJECT_STEPS[0]), project=project, batch=1)


def listed(client: httpx.Client, project: str) -> dict[str, Any] | None:
    found = [p for p in client.get("/projects").json() if p["project"] == project]
    return found[0] if found else None


def test_a_deletion_cut_short_hides_the_project_until_run_again(
    client: httpx.Client, neo4j_driver: Driver, project: str
) -> None:
    other = project + "-kept"
    for p in (project, other):
        assert client.post("/traces", json=demo_batch(p)).status_code == 200
    params = {"project": project}
    for case_id in DEMO_TRUTH:
        assert client.post(f"/attribute/{case_id}", params=params).status_code == 200
    before = count_nodes(neo4j_driver, project)

    cut_short(neo4j_driver, project)
    left = count_nodes(neo4j_driver, project)
    assert 0 < left < before  # half deleted

    reads = [
        client.get("/cases", params=params),
        client.get("/cases/case-1", params=params),
        client.get("/cases/case-1/subgraph", params=params),
        client.get("/attributions", params=params),
        client.get("/report", params=params),
        client.get("/audits/dangling_units", params=params),
        client.post("/cypher", params=params, json={"query": "RETURN 1 AS one"}),
    ]
    for read in reads:
        assert read.status_code == 404, read.text
        assert read.json()["error"] == "project_being_deleted"
    writes = [
        client.post("/traces", json=demo_batch(project)),
        client.post("/cases/case-1/verdict", params=params, json={"verdict": "passed"}),
        client.post("/attribute/case-1", params=params),
        client.delete("/data", params={**params, "before": "2030-01-01T00:00:00Z"}),
    ]
    for write in writes:
        assert write.status_code == 409, write.text
        assert write.json()["error"] == "project_being_deleted"
    assert count_nodes(neo4j_driver, project) == left  # no write landed
    shown = listed(client, project)
    assert shown is not None and shown["deleting"] is True
    assert client.get("/cases", params={"project": other}).status_code == 200

    done = client.delete("/project", params={**params, "confirm": project})
    assert done.status_code == 200, done.text
    assert done.json() == {"project": project, "nodes": left}
    assert count_nodes(neo4j_driver, project) == 0
    marks = neo4j_driver.execute_query(
        "MATCH (d:ProjectDeletion {project: $p}) RETURN count(d) AS n", p=project
    ).records[0]["n"]
    assert marks == 0
    assert listed(client, project) is None
    assert client.get("/cases", params=params).json() == []  # like any project never written
    assert client.post("/traces", json=demo_batch(project)).status_code == 200
    kept = listed(client, other)
    assert kept is not None and kept["deleting"] is False


def test_deleting_a_project_that_holds_nothing_leaves_no_mark(
    client: httpx.Client, neo4j_driver: Driver, project: str
) -> None:
    done = client.delete("/project", params={"project": project, "confirm": project})
    assert done.json() == {"project": project, "nodes": 0}
    assert listed(client, project) is None
    assert client.get("/cases", params={"project": project}).status_code == 200


def operators(plan: dict[str, Any]) -> list[str]:
    return [plan["operatorType"].split("@")[0]] + [
        name for child in plan.get("children", []) for name in operators(child)
    ]


@pytest.mark.usefixtures("service")  # it applies the schema: the indexes the plans seek
@pytest.mark.parametrize(
    "name",
    [*PROJECT_STEPS, "deletion/project/begin", "deletion/project/finish", "projects/being_deleted"],
)
def test_each_step_of_a_project_deletion_seeks_by_index(neo4j_driver: Driver, name: str) -> None:
    plan = neo4j_driver.execute_query(f"EXPLAIN {query(name)}", project="p", batch=10).summary
    assert plan is not None and plan.plan is not None
    used = operators(plan.plan)
    assert not {"AllNodesScan", "NodeByLabelScan"} & set(used), used
    assert any("IndexSeek" in op for op in used), used


def test_the_steps_cover_every_label_of_a_project() -> None:
    labels = {m.group(1) for step in PROJECT_STEPS if (m := re.search(r"\(n:(\w+)", query(step)))}
    assert labels == NODE_LABELS - {"ProjectDeletion"}
