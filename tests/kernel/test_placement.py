"""Project placement and routing URIs: two real Neo4j instances (the session's and one started
here), one service whose settings place some projects on the second; every kind of endpoint is
driven over HTTP and each store is then counted directly. Plus a service on a ``neo4j://``
(routing) URI against the test Neo4j."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from neo4j import Driver, GraphDatabase
from pydantic import ValidationError

from service.placement import DEFAULT_STORE, PlacementError, StoreConfig, store_of
from service.settings import Settings
from tests.support.graph import graph_counts
from tests.support.servers import Neo4jHandle, ServiceHandle, free_port, local_neo4j, run_service
from tests.support.traces import demo_batch

PLACEMENT = {"solo-exact": "second", "big-*": "second"}


@pytest.fixture(scope="module")
def second_neo4j(workdir: Path) -> Iterator[Neo4jHandle]:
    """Another local Neo4j (small heap): the second store."""
    with local_neo4j(workdir / "neo4j-second", heap="512m", pagecache="128m") as handle:
        yield handle


@pytest.fixture(scope="module")
def second_driver(second_neo4j: Neo4jHandle) -> Iterator[Driver]:
    with GraphDatabase.driver(second_neo4j.uri, auth=("neo4j", "unused")) as driver:
        yield driver


@contextmanager
def _placed_service(neo4j: Neo4jHandle, workdir: Path, second_uri: str) -> Iterator[ServiceHandle]:
    stores = {"second": {"uri": second_uri, "user": "neo4j", "password": "unused"}}
    with run_service(
        neo4j.uri,
        workdir,
        MEMTRACE_NEO4J_USER=neo4j.user,
        MEMTRACE_NEO4J_PASSWORD=neo4j.password,
        MEMTRACE_NEO4J_STORES=json.dumps(stores),
        MEMTRACE_NEO4J_PLACEMENT=json.dumps(PLACEMENT),
    ) as handle:
        yield handle


@pytest.fixture(scope="module")
def placed(neo4j: Neo4jHandle, workdir: Path, second_neo4j: Neo4jHandle) -> Iterator[httpx.Client]:
    """A client of a service with two stores: ``big-*`` and ``solo-exact`` on the second."""
    with (
        _placed_service(neo4j, workdir, second_neo4j.uri) as handle,
        httpx.Client(base_url=handle.url, timeout=60) as client,
    ):
        yield client


def _big() -> str:
    return f"big-{uuid.uuid4().hex[:10]}"


def _nodes(driver: Driver, project: str) -> int:
    records, _, _ = driver.execute_query(
        "MATCH (n {project: $project}) RETURN count(n) AS n", project=project, database_="neo4j"
    )
    return int(records[0]["n"])


# --- the rules, no Neo4j -------------------------------------------------------------------


def test_exact_names_then_the_first_matching_pattern_then_the_default() -> None:
    placement = {"acme-*": "a", "acme-special": "b", "acme-s*": "c", "*-eu": "d"}
    assert store_of("acme-special", placement) == "b"  # exact wins over every pattern
    assert store_of("acme-spare", placement) == "a"  # first pattern listed wins over acme-s*
    assert store_of("shop-eu", placement) == "d"
    assert store_of("shop-us", placement) == DEFAULT_STORE
    assert store_of("ACME-x", placement) == DEFAULT_STORE  # case-sensitive, like project names


def test_settings_refuse_a_placement_on_an_unknown_store() -> None:
    with pytest.raises(ValidationError, match="not in MEMTRACE_NEO4J_STORES: nowhere"):
        Settings(neo4j_placement={"big-*": "nowhere"})
    with pytest.raises(ValidationError, match="may not define 'default'"):
        Settings(neo4j_stores={DEFAULT_STORE: StoreConfig(uri="bolt://x:1")})
    with pytest.raises(ValidationError, match="uri"):
        Settings(neo4j_stores={"s": {"uri": "http://x:1"}})  # type: ignore[dict-item]
    assert issubclass(PlacementError, ValueError)


def test_stores_and_placement_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    stores = {
        "big": {"uri": "neo4j+s://db.example:7687", "database": "memtrace", "password": "s3cret-pw"}
    }
    monkeypatch.setenv("MEMTRACE_NEO4J_STORES", json.dumps(stores))
    monkeypatch.setenv("MEMTRACE_NEO4J_PLACEMENT", json.dumps({"t-*": "big"}))
    settings = Settings()
    big = settings.neo4j_stores["big"]
    assert (big.uri, big.database, big.user) == ("neo4j+s://db.example:7687", "memtrace", "neo4j")
    assert big.password.get_secret_value() == "s3cret-pw" and "s3cret" not in repr(big)
    assert store_of("t-1", settings.neo4j_placement) == "big"


# --- two stores, over HTTP -----------------------------------------------------------------


def test_ingest_lands_only_on_the_projects_store(
    placed: httpx.Client, neo4j_driver: Driver, second_driver: Driver, project: str
) -> None:
    big = _big()
    for name in (big, project, "solo-exact"):
        assert placed.post("/traces", json=demo_batch(name)).status_code == 200
    # The project named by the query string instead of the body goes to its store too.
    body = demo_batch(big)
    del body["project"]
    other = _big()
    assert placed.post("/traces", params={"project": other}, json=body).status_code == 200
    for name in (big, "solo-exact", other):
        assert _nodes(second_driver, name) > 0 and _nodes(neo4j_driver, name) == 0
    assert _nodes(neo4j_driver, project) > 0 and _nodes(second_driver, project) == 0
    assert graph_counts(second_driver, big) == graph_counts(neo4j_driver, project)


def test_reads_audits_and_cypher_never_cross_stores(
    placed: httpx.Client, neo4j_driver: Driver, second_driver: Driver
) -> None:
    # The same project name written straight into the other store (as a stale copy would be):
    # no endpoint of the placed service may see it.
    big = _big()
    assert placed.post("/traces", json=demo_batch(big)).status_code == 200
    neo4j_driver.execute_query(
        "CREATE (:Operation {project: $p, id: 'stray-op', kind: 'extraction', name: 'x', "
        "ts: datetime()}), (:Case {project: $p, id: 'stray-case', verdict: 'failed'})",
        p=big,
        database_="neo4j",
    )
    query = {"query": "MATCH (c:Case {project: $project}) RETURN c.id AS id ORDER BY id"}
    rows = placed.post("/cypher", params={"project": big}, json=query).json()["rows"]
    ids = [r[0] for r in rows]
    assert ids and "stray-case" not in ids
    assert ids == sorted(c["id"] for c in demo_batch(big)["cases"])
    idle = placed.get("/audits/idle_operations", params={"project": big}).json()
    assert "stray-op" not in [r["operation"] for r in idle["rows"]]
    for name in ("construction_loss", "deleted_then_needed", "retrieval_misses"):
        page = placed.get(f"/audits/{name}", params={"project": big})
        assert page.status_code == 200, page.text
    cases = placed.get("/cases", params={"project": big}).json()
    assert "stray-case" not in json.dumps(cases) and len(cases) == len(ids)
    sub = placed.get("/cases/case-1/subgraph", params={"project": big})
    assert sub.status_code == 200 and len(sub.json()["nodes"]) > 1
    assert placed.get("/cases/stray-case", params={"project": big}).status_code == 404


def test_attribution_jobs_and_reports_run_on_the_projects_store(
    placed: httpx.Client, neo4j_driver: Driver, second_driver: Driver
) -> None:
    big = _big()
    assert placed.post("/traces", json=demo_batch(big)).status_code == 200
    one = placed.post("/attribute/case-1", params={"project": big})
    assert one.status_code == 200, one.text
    started = placed.post("/attribution-jobs", params={"project": big})
    assert started.status_code in (200, 201, 202), started.text
    job_id = started.json()["id"]
    deadline = time.monotonic() + 60
    while (job := placed.get(f"/attribution-jobs/{job_id}", params={"project": big}).json())[
        "status"
    ] not in ("completed", "failed"):
        assert time.monotonic() < deadline, job
        time.sleep(0.2)
    assert job["status"] == "completed", job
    failed = [c for c in demo_batch(big)["cases"] if c.get("verdict") == "failed"]
    count = "MATCH (a:Attribution {project: $p}) RETURN count(DISTINCT a.case_id) AS n"
    on_second = second_driver.execute_query(count, p=big, database_="neo4j").records[0]["n"]
    assert on_second == len(failed)
    assert neo4j_driver.execute_query(count, p=big, database_="neo4j").records[0]["n"] == 0
    report = placed.get("/report", params={"project": big}).json()
    assert report["totals"]["attributions"] == len(failed), report
    assert placed.get("/ui/cases/case-1", params={"project": big}).status_code == 200


def test_imports_otlp_and_deletion_follow_the_project(
    placed: httpx.Client, neo4j_driver: Driver, second_driver: Driver
) -> None:
    big = _big()
    span = {
        "resourceSpans": [
            {
                "scopeSpans": [
                    {
                        "spans": [
                            {
                                "traceId": "5b8efff798038103d269b633813fc60c",
                                "spanId": "eee19b7ec3c1b174",
                                "name": "search_memory",
                                "startTimeUnixNano": "1700000000000000000",
                                "endTimeUnixNano": "1700000001000000000",
                                "attributes": [
                                    {
                                        "key": "gen_ai.operation.name",
                                        "value": {"stringValue": "search_memory"},
                                    }
                                ],
                            }
                        ]
                    }
                ]
            }
        ]
    }
    sent = placed.post("/otlp/v1/traces", params={"project": big}, json=span)
    assert sent.status_code == 200, sent.text
    assert _nodes(second_driver, big) > 0 and _nodes(neo4j_driver, big) == 0
    gone = placed.delete("/project", params={"project": big, "confirm": big})
    assert gone.status_code == 200, gone.text
    assert _nodes(second_driver, big) == 0


def test_readyz_checks_every_store(
    placed: httpx.Client, neo4j: Neo4jHandle, workdir: Path, project: str
) -> None:
    assert placed.get("/readyz").json()["status"] == "ready"
    # A second store nobody listens on: not ready, yet projects of the default store work.
    with (
        _placed_service(neo4j, workdir, f"bolt://127.0.0.1:{free_port()}") as handle,
        httpx.Client(base_url=handle.url, timeout=60) as client,
    ):
        assert client.get("/readyz").status_code == 503
        assert client.post("/traces", json=demo_batch(project)).status_code == 200
        down = client.post("/traces", json=demo_batch(_big()))
        assert down.status_code == 503 and down.json()["error"], down.text


# --- a routing URI -------------------------------------------------------------------------


def test_the_service_works_on_a_routing_uri(
    neo4j: Neo4jHandle, workdir: Path, project: str, neo4j_driver: Driver
) -> None:
    if not neo4j.uri.startswith("bolt://"):
        pytest.skip(f"the test Neo4j is not a bolt:// URI: {neo4j.uri}")
    routing = "neo4j://" + neo4j.uri.removeprefix("bolt://")
    with (
        run_service(
            routing,
            workdir,
            MEMTRACE_NEO4J_USER=neo4j.user,
            MEMTRACE_NEO4J_PASSWORD=neo4j.password,
        ) as handle,
        httpx.Client(base_url=handle.url, timeout=60) as client,
    ):
        assert client.get("/readyz").status_code == 200
        assert client.post("/traces", json=demo_batch(project)).status_code == 200
        attributed: dict[str, Any] = client.post(
            "/attribute/case-1", params={"project": project}
        ).json()
        assert attributed["status"] == "attributed", attributed
        audit = client.get("/audits/deleted_then_needed", params={"project": project})
        assert audit.status_code == 200 and audit.json()["rows"], audit.text
        rows = client.post(
            "/cypher",
            params={"project": project},
            json={"query": "MATCH (o:Operation {project: $project}) RETURN count(o) AS n"},
        ).json()["rows"]
        assert rows == [[len(demo_batch(project)["operations"])]]
        assert client.get("/report", params={"project": project}).status_code == 200
    assert _nodes(neo4j_driver, project) > 0
