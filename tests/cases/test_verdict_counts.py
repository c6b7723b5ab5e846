"""A verdict that changes after a case was attributed: the attribution made for the old verdict
stops being the case's attribution, so every count (``GET /report``, ``memtrace report``, the
case list, ``GET /attributions``) says attributed <= failed and they agree. The dashboard's
counts are checked in tests/ui/test_console.py with the same story (``flip_after_attributing``).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import httpx
from neo4j import Driver

from tests.support.attribution import attribute
from tests.support.cli import memtrace
from tests.support.servers import Neo4jHandle, ServiceHandle, client_of_service
from tests.support.traces import DEMO_TRUTH, demo_batch

FLIPPED = ("case-1", "case-2")
"""Failed in the example trace; attributed (by the job, case-2 again by a single POST
/attribute), then set passed."""


def set_verdict(client: httpx.Client, project: str, case_id: str, verdict: str) -> None:
    posted = client.post(
        f"/cases/{case_id}/verdict", params={"project": project}, json={"verdict": verdict}
    )
    assert posted.status_code == 200, posted.text


def run_job(client: httpx.Client, project: str) -> None:
    """Attribute every failed case as one job and wait for it (a deadline, not a timing check)."""
    started = client.post("/attribution-jobs", params={"project": project})
    assert started.status_code == 202, started.text
    deadline = time.monotonic() + 240
    while True:
        job = client.get(f"/attribution-jobs/{started.json()['id']}", params={"project": project})
        if job.json()["status"] != "running":
            assert job.json()["status"] == "completed", job.text
            return
        assert time.monotonic() < deadline, job.text
        time.sleep(0.2)


def flip_after_attributing(client: httpx.Client, project: str) -> None:
    """The example trace; case-1 set passed then failed again before anything was attributed
    (a verdict with no attribution to drop); every failed case attributed by a job and case-2
    once more by POST /attribute; then both set passed."""
    assert client.post("/traces", json=demo_batch(project)).status_code == 200
    set_verdict(client, project, "case-1", "passed")
    set_verdict(client, project, "case-1", "failed")
    run_job(client, project)
    again = attribute(client, project, "case-2", refresh=True)
    assert again.status_code == 200 and again.json()["status"] == "attributed", again.text
    report = client.get("/report", params={"project": project}).json()
    assert (report["totals"]["failed"], report["totals"]["attributed"]) == (5, 5)
    for case_id in FLIPPED:
        set_verdict(client, project, case_id, "passed")


def report(client: httpx.Client, project: str, **params: str) -> dict[str, Any]:
    got = client.get("/report", params={"project": project, **params})
    assert got.status_code == 200, got.text
    return dict(got.json())


def test_counts_agree_after_a_verdict_leaves_failed(
    client: httpx.Client, service: ServiceHandle, project: str
) -> None:
    flip_after_attributing(client, project)
    served = report(client, project)
    totals = served["totals"]
    still_failed = len(DEMO_TRUTH) - len(FLIPPED)
    assert totals["failed"] == still_failed
    assert totals["attributed"] == still_failed  # was 5: attributions of passed cases counted
    assert totals["failed_unattributed"] == 0
    assert sum(r["count"] for r in served["by_error_type"]) == totals["attributed"]
    assert sum(r["count"] for r in served["by_system"]) == totals["attributed"]

    printed = memtrace("report", "--project", project, "--url", service.url, "--json")
    assert printed.returncode == 0, printed.stderr
    assert json.loads(printed.stdout)["totals"] == totals

    # What the counts are made of agrees with them: the case list and the attributions.
    params = {"project": project}
    cases = {c["id"]: c for c in client.get("/cases", params=params).json()}
    for case_id in FLIPPED:
        assert cases[case_id]["verdict"] == "passed"
        assert cases[case_id]["attribution_status"] is None, cases[case_id]
        assert client.get(f"/cases/{case_id}/attribution", params=params).status_code == 404
    listed = client.get("/attributions", params={**params, "status": "attributed"}).json()
    assert len(listed) == totals["attributed"]
    failed_attributed = client.get(
        "/cases", params={**params, "verdict": "failed", "attributed": "true"}
    ).json()
    assert len(failed_attributed) == totals["attributed"]


def test_failed_again_needs_a_new_attribution(client: httpx.Client, project: str) -> None:
    flip_after_attributing(client, project)
    params = {"project": project}
    # Attributing a passed case now says so, rather than returning the old blame.
    passed = attribute(client, project, "case-1")
    assert passed.status_code == 200 and passed.json()["status"] == "not_failed", passed.text

    # Failed again: the not_failed result is no longer the case's either, and the case waits
    # for an attribution (counted as such) until it gets a new one.
    set_verdict(client, project, "case-1", "failed")
    assert client.get("/cases/case-1/attribution", params=params).status_code == 404
    totals = report(client, project)["totals"]
    assert (totals["failed"], totals["attributed"], totals["failed_unattributed"]) == (4, 3, 1)
    waiting = client.get("/cases", params={**params, "verdict": "failed", "attributed": "false"})
    assert [c["id"] for c in waiting.json()] == ["case-1"]
    renewed = attribute(client, project, "case-1")
    assert renewed.status_code == 200 and renewed.json()["status"] == "attributed", renewed.text
    assert renewed.json()["error_type"] == DEMO_TRUTH["case-1"][0]
    totals = report(client, project)["totals"]
    assert (totals["failed"], totals["attributed"], totals["failed_unattributed"]) == (4, 4, 0)

    # The same verdict sent again changes nothing: the attribution stays.
    set_verdict(client, project, "case-1", "failed")
    assert client.get("/cases/case-1/attribution", params=params).status_code == 200


def test_attributions_kept_by_an_earlier_version_are_dropped_at_start_up(
    client: httpx.Client,
    project: str,
    neo4j: Neo4jHandle,
    neo4j_driver: Driver,
    tmp_path: Path,
) -> None:
    """A store written before verdicts dropped attributions holds a blame of a passed case (the
    verdict changed as an earlier version changed it: the property alone), and, older still than
    the kept report counts, no counts: the next service start deletes the blame
    (cypher/migrations), counts the cases, and the counts agree again."""
    assert client.post("/traces", json=demo_batch(project)).status_code == 200
    for case_id in FLIPPED:
        assert attribute(client, project, case_id).status_code == 200
    neo4j_driver.execute_query(
        "MATCH (c:Case {project: $p}) WHERE c.id IN $ids SET c.verdict = 'passed'",
        p=project,
        ids=list(FLIPPED),
    )
    neo4j_driver.execute_query(  # an earlier version kept no report counts
        "MATCH (c:Case {project: $p}) REMOVE c.report_key, c.report_sums "
        "WITH count(*) AS done MATCH (k:ReportCount {project: $p}) DETACH DELETE k",
        p=project,
    )
    # the earlier version's count, case by case
    assert report(client, project, recount="true")["totals"]["attributed"] == 2
    with client_of_service(neo4j, tmp_path) as fresh:
        totals = report(fresh, project)["totals"]
        assert (totals["failed"], totals["attributed"], totals["attributions"]) == (3, 0, 0)
