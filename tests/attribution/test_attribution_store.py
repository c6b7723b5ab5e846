"""Storing attributions: one per case, whatever the concurrency, and readers that count one.

Issue 9, point 7: concurrent ``POST /attribute/{id}`` with ``{"refresh": true}`` stored one
Attribution per request. These tests send real concurrent HTTP requests to the service and
count the nodes in Neo4j directly.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import httpx
from neo4j import Driver

from tests.support.servers import ServiceHandle
from tests.support.traces import demo_batch

CONCURRENT = 12


def count_attributions(driver: Driver, project: str, case_id: str) -> int:
    records, _, _ = driver.execute_query(
        "MATCH (a:Attribution {project: $project, case_id: $case_id}) RETURN count(a) AS n",
        project=project,
        case_id=case_id,
    )
    return int(records[0]["n"])


def refresh_concurrently(url: str, project: str, case_id: str, n: int) -> list[int]:
    def one(_: int) -> int:
        with httpx.Client(base_url=url, timeout=120) as c:
            response = c.post(
                f"/attribute/{case_id}", params={"project": project}, json={"refresh": True}
            )
            return response.status_code

    with ThreadPoolExecutor(n) as pool:
        return list(pool.map(one, range(n)))


def test_concurrent_refreshes_leave_one_attribution(
    service: ServiceHandle, project: str, neo4j_driver: Driver
) -> None:
    with httpx.Client(base_url=service.url, timeout=60) as c:
        assert c.post("/traces", json=demo_batch(project)).status_code == 200
    for round_ in range(3):  # a race may not show on every round; three make it likely
        codes = refresh_concurrently(service.url, project, "case-4", CONCURRENT)
        assert codes == [200] * CONCURRENT
        assert count_attributions(neo4j_driver, project, "case-4") == 1, f"round {round_}"


def test_concurrent_first_attributions_leave_one(
    service: ServiceHandle, project: str, neo4j_driver: Driver
) -> None:
    # No stored attribution yet: every request computes and stores one.
    with httpx.Client(base_url=service.url, timeout=60) as c:
        assert c.post("/traces", json=demo_batch(project)).status_code == 200
    codes = refresh_concurrently(service.url, project, "case-2", CONCURRENT)
    assert codes == [200] * CONCURRENT
    assert count_attributions(neo4j_driver, project, "case-2") == 1


def _add_legacy_duplicate(driver: Driver, project: str, case_id: str) -> None:
    """A second, older Attribution on the case, as a store written before the fix may hold."""
    driver.execute_query(
        "MATCH (c:Case {project: $project, id: $case_id})-[:ATTRIBUTED]->(a:Attribution) "
        "WITH c, a LIMIT 1 "
        "CREATE (c)-[:ATTRIBUTED]->(b:Attribution) SET b = properties(a), "
        "b.created_at = a.created_at - duration('PT1H'), b.error_type = 'ExtractionError'",
        project=project,
        case_id=case_id,
    )


def test_readers_count_one_attribution_per_case_even_with_a_legacy_duplicate(
    service: ServiceHandle, project: str, neo4j_driver: Driver
) -> None:
    with httpx.Client(base_url=service.url, timeout=60) as c:
        assert c.post("/traces", json=demo_batch(project)).status_code == 200
        newest = c.post("/attribute/case-4", params={"project": project}).json()
        _add_legacy_duplicate(neo4j_driver, project, "case-4")
        assert count_attributions(neo4j_driver, project, "case-4") == 2

        listed = c.get("/attributions", params={"project": project}).json()
        assert [r["case_id"] for r in listed] == ["case-4"]
        assert listed[0]["created_at"] == newest["created_at"]
        stored = c.post("/attribute/case-4", params={"project": project}).json()
        assert stored == newest  # the newest one, not the legacy one

        report = c.get("/report", params={"project": project}).json()
        assert (report["totals"]["attributions"], report["totals"]["cases"]) == (1, 6)
        assert [e["count"] for e in report["by_error_type"] if e["count"]] == [1]

        # The next store replaces both.
        again = c.post("/attribute/case-4", params={"project": project}, json={"refresh": True})
        assert again.status_code == 200
    assert count_attributions(neo4j_driver, project, "case-4") == 1
