"""API keys: off by default, and when configured every endpoint but health needs one, bound to
its projects. Tried with missing, wrong and misplaced keys and with other projects' names in
every place a project can be named (query, header, batch body)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from memtrace_client import MemTraceClient, Tracer
from neo4j import Driver

from tests.support.naming import SESSION_COOKIE, ui_session
from tests.support.otlp_export import export, span
from tests.support.servers import Neo4jHandle, ServiceHandle, run_service
from tests.support.traces import demo_batch

ALPHA_KEY = "alpha-key-" + uuid.uuid4().hex
ADMIN_KEY = "admin-key-" + uuid.uuid4().hex
RUN = uuid.uuid4().hex[:8]
ALPHA, BETA = f"alpha-{RUN}", f"beta-{RUN}"


@pytest.fixture(scope="module")
def keyed(neo4j: Neo4jHandle, workdir: Path) -> Iterator[ServiceHandle]:
    keys_file = workdir / f"keys-{RUN}.txt"
    keys_file.write_text(f"# admin: every project\n{ADMIN_KEY}\n")
    with run_service(
        neo4j.uri,
        workdir,
        MEMTRACE_NEO4J_USER=neo4j.user,
        MEMTRACE_NEO4J_PASSWORD=neo4j.password,
        MEMTRACE_API_KEYS=f"{ALPHA_KEY}:{ALPHA}",
        MEMTRACE_API_KEYS_FILE=str(keys_file),
        MEMTRACE_CYPHER_TIMEOUT_S="1",
    ) as handle:
        yield handle


def http(service: ServiceHandle, key: str | None) -> httpx.Client:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return httpx.Client(base_url=service.url, headers=headers, timeout=60)


def test_keys_are_off_by_default(client: httpx.Client, project: str) -> None:
    assert client.get("/cases", params={"project": project}).status_code == 200


@pytest.mark.parametrize(
    "authorization",
    [
        None,
        "",
        "Bearer",
        "Basic " + ALPHA_KEY,
        "Bearer wrong-key-0123456789",
        f"Bearer {ALPHA_KEY}x",
        f"Bearer {ALPHA_KEY}:{BETA}",
        f"bearer  {ALPHA_KEY[:-1]}",
    ],
)
def test_missing_or_wrong_keys_are_401(keyed: ServiceHandle, authorization: str | None) -> None:
    headers = {"Authorization": authorization} if authorization is not None else {}
    for method, path in [
        ("GET", "/cases"),
        ("POST", "/traces"),
        ("POST", "/cypher"),
        ("GET", "/attributions"),
        ("POST", "/attribute/x"),
    ]:
        response = httpx.request(
            method, keyed.url + path, params={"project": ALPHA}, headers=headers, json={}
        )
        assert response.status_code == 401, (path, response.text)
        assert response.json()["error"] == "unauthorized"
        assert response.headers["www-authenticate"].startswith("Bearer")
        assert ALPHA_KEY not in response.text


def test_health_and_docs_need_no_key(keyed: ServiceHandle) -> None:
    assert httpx.get(keyed.url + "/healthz").status_code == 200
    assert httpx.get(keyed.url + "/openapi.json").status_code == 200


def test_a_project_key_reads_and_writes_its_project_only(
    keyed: ServiceHandle, neo4j_driver: Driver
) -> None:
    with http(keyed, ALPHA_KEY) as alpha, http(keyed, ADMIN_KEY) as admin:
        assert alpha.post("/traces", json=demo_batch(ALPHA)).status_code == 200
        assert admin.post("/traces", json=demo_batch(BETA)).status_code == 200

        assert alpha.get("/cases", params={"project": ALPHA}).status_code == 200
        # Another project named in the query, in the header, in the batch body: all refused.
        assert alpha.get("/cases", params={"project": BETA}).status_code == 403
        assert alpha.get("/cases/case-1", params={"project": BETA}).status_code == 403
        assert alpha.get("/cases", headers={"X-MemTrace-Project": BETA}).status_code == 403
        assert alpha.get("/cases").status_code == 403  # no project means "default"
        forged = demo_batch(BETA) | {
            "units": [{"id": "forged", "kind": "memory", "content": "written by alpha"}]
        }
        refused = alpha.post("/traces", json=forged)
        assert refused.status_code == 403 and refused.json()["error"] == "forbidden"
        assert alpha.post("/traces", params={"project": ALPHA}, json=forged).status_code == 403
        assert (
            alpha.post("/cypher", params={"project": BETA}, json={"query": "RETURN 1"}).status_code
            == 403
        )
        assert alpha.post(f"/attribute/case-1?project={BETA}").status_code == 403
        assert alpha.get("/attributions", params={"project": BETA}).status_code == 403
        otlp = alpha.post(
            "/otlp/v1/traces",
            content=export(span(1, 1, "step", 0.0)).SerializeToString(),
            headers={"Content-Type": "application/x-protobuf", "X-MemTrace-Project": BETA},
        )
        assert otlp.status_code == 403

        # The admin key (from the keys file) reaches both projects.
        assert admin.get("/cases", params={"project": ALPHA}).status_code == 200
        assert admin.get("/cases", params={"project": BETA}).status_code == 200
        assert alpha.post(f"/attribute/case-1?project={ALPHA}").status_code == 200

    forged_units = neo4j_driver.execute_query(
        "MATCH (u:Unit {id: 'forged'}) RETURN count(u) AS n"
    ).records[0]["n"]
    assert forged_units == 0


def test_cypher_through_a_key_stays_in_its_project_and_times_out(keyed: ServiceHandle) -> None:
    with http(keyed, ALPHA_KEY) as alpha, http(keyed, ADMIN_KEY) as admin:
        admin.post("/traces", json=demo_batch(ALPHA))
        admin.post("/traces", json=demo_batch(BETA))
        rows = alpha.post(
            "/cypher",
            params={"project": ALPHA},
            json={"query": "MATCH (c:Case {project: $project}) RETURN DISTINCT c.project"},
        ).json()["rows"]
        assert rows == [[ALPHA]]
        slow = alpha.post(
            "/cypher",
            params={"project": ALPHA},
            json={"query": "UNWIND range(1, 2000000000) AS x WITH x WHERE x = -1 RETURN x"},
        )
        assert slow.status_code == 422, slow.text
        assert "longer than 1 s" in slow.json()["message"]


def test_the_client_sdk_sends_its_key(keyed: ServiceHandle, tmp_path: Path) -> None:
    tracer = Tracer(
        MemTraceClient(keyed.url, api_key=ALPHA_KEY, project=ALPHA), spool_dir=tmp_path / "a"
    )
    tracer.record_operation("keyed-op", kind="other", id=f"keyed-{RUN}")
    assert tracer.flush(30)
    tracer.close()
    wrong = Tracer(
        MemTraceClient(keyed.url, api_key=ALPHA_KEY, project=BETA), spool_dir=tmp_path / "b"
    )
    wrong.record_operation("forbidden-op", kind="other")
    refused = wrong.flush(30)
    assert refused.settled and not refused  # refused for good, not retried
    assert refused.rejected[0].reason.startswith("HTTP 403")
    wrong.close()
    assert wrong.delivery.stats.rejected_batches == 1
    [kept] = (tmp_path / "b" / "rejected").glob("*.reason.txt")
    assert kept.read_text().startswith("HTTP 403")
    batch = kept.parent / kept.name.replace(".reason.txt", ".json")
    assert json.loads(batch.read_text())["project"] == BETA


def test_a_service_that_requires_keys_will_not_start_without_them(
    neo4j: Neo4jHandle, workdir: Path
) -> None:
    required = run_service(neo4j.uri, workdir, MEMTRACE_AUTH_REQUIRED="true")
    with pytest.raises(RuntimeError, match="MEMTRACE_AUTH_REQUIRED is set but no API keys"):
        required.__enter__()
    short = run_service(neo4j.uri, workdir, MEMTRACE_API_KEYS="short:alpha")
    with pytest.raises(RuntimeError, match="shorter than 16 characters"):
        short.__enter__()


def test_a_browser_signs_in_once_and_sees_only_its_projects(keyed: ServiceHandle) -> None:
    with http(keyed, ADMIN_KEY) as admin:
        admin.post("/traces", json=demo_batch(ALPHA))
        admin.post("/traces", json=demo_batch(BETA))
    with httpx.Client(base_url=keyed.url, timeout=60) as browser:
        page = f"/ui/cases/case-1?project={ALPHA}"
        first = browser.get(page)
        assert first.status_code == 303  # to the key form, and back afterwards
        assert first.headers["location"].startswith("/ui/login?next=%2Fui%2Fcases%2Fcase-1")
        assert browser.get("/ui/login", params={"next": page}).status_code == 200
        assert browser.get(f"/cases/case-1?project={ALPHA}").status_code == 401  # API: JSON
        wrong = browser.post("/ui/login", data={"key": "not-a-key-0123456789", "next": page})
        assert wrong.status_code == 401 and "not one this service accepts" in wrong.text
        assert SESSION_COOKIE not in wrong.headers.get("set-cookie", "")
        signed = browser.post("/ui/login", data={"key": ALPHA_KEY, "next": page})
        assert signed.status_code == 303 and signed.headers["location"] == page
        cookie = signed.headers["set-cookie"].lower()
        assert "httponly" in cookie and "samesite=strict" in cookie
        assert browser.get(page).status_code == 200
        assert browser.get(f"/cases/case-1?project={ALPHA}").status_code == 200
        assert browser.get(f"/ui/cases/case-1?project={BETA}").status_code == 403
        assert browser.get(f"/cases/case-1?project={BETA}").status_code == 403
        # After signing in the browser is only ever sent to a page of this UI.
        away = browser.post("/ui/login", data={"key": ALPHA_KEY, "next": "//evil.example/x"})
        assert away.headers["location"] == "/ui/"


def test_no_body_is_read_before_the_key_is_checked(keyed: ServiceHandle) -> None:
    """An unauthenticated caller learns nothing from the body: invalid JSON, an oversized body
    and a valid batch all get the same 401."""
    for content in (b"{not json", b"x" * (9 * 1024 * 1024), json.dumps(demo_batch(ALPHA)).encode()):
        response = httpx.post(
            keyed.url + "/traces",
            content=content,
            headers={"Content-Type": "application/json"},
            timeout=60,
        )
        assert response.status_code == 401, response.text[:200]
        assert response.json()["error"] == "unauthorized"


def test_a_cookie_signed_write_must_be_json_from_this_origin(
    keyed: ServiceHandle, neo4j_driver: Driver
) -> None:
    """A page on another port of this host can submit a form with the UI's cookie: refused."""
    with http(keyed, ADMIN_KEY) as admin:
        admin.post("/traces", json=demo_batch(ALPHA))
    path = f"/attribute/case-2?project={ALPHA}"
    session = {SESSION_COOKIE: ui_session(keyed.url, ALPHA_KEY)}
    with httpx.Client(base_url=keyed.url, timeout=60, cookies=session) as b:
        form = b.post(path, headers={"Content-Type": "application/x-www-form-urlencoded"})
        assert form.status_code == 403, form.text
        assert "application/json" in form.json()["message"]
        empty = b.post(path)  # no content type at all
        assert empty.status_code == 403
        foreign = b.post(path, json={}, headers={"Origin": "http://127.0.0.1:1"})
        assert foreign.status_code == 403
        assert foreign.json()["details"][0]["loc"] == ["header", "origin"]
        stored = neo4j_driver.execute_query(
            "MATCH (:Case {project: $p, id: 'case-2'})-[:ATTRIBUTED]->(a) RETURN count(a) AS n",
            p=ALPHA,
        ).records[0]["n"]
        assert stored == 0
        same = b.post(path, json={}, headers={"Origin": keyed.url})
        assert same.status_code == 200, same.text
        # A bearer key is not sent by browsers on their own: no such rule for it.
    with http(keyed, ALPHA_KEY) as alpha:
        assert alpha.post(f"/attribute/case-3?project={ALPHA}").status_code == 200


def test_a_key_with_an_empty_scope_is_refused_at_start_up(
    neo4j: Neo4jHandle, workdir: Path
) -> None:
    """``KEY:`` reads like "no project" but used to grant every project."""
    empty = run_service(neo4j.uri, workdir, MEMTRACE_API_KEYS="empty-scope-key-0123456789:")
    with pytest.raises(RuntimeError, match="names no project"):
        empty.__enter__()


def test_the_login_form_takes_a_key_only_from_its_own_page(keyed: ServiceHandle) -> None:
    """A page on another origin (another port of this host) cannot sign a browser in, and the
    cookie a browser is given is a session made from the key, not the key."""
    form = {"key": ALPHA_KEY, "next": "/ui/"}
    for foreign in ("http://127.0.0.1:9999", "null", keyed.url.replace("http:", "https:")):
        refused = httpx.post(
            f"{keyed.url}/ui/login", data=form, headers={"Origin": foreign}, timeout=60
        )
        assert refused.status_code == 403, (foreign, refused.text[:300])
        assert "set-cookie" not in refused.headers
    signed = httpx.post(
        f"{keyed.url}/ui/login", data=form, headers={"Origin": keyed.url}, timeout=60
    )
    assert signed.status_code == 303, signed.text[:300]
    cookie = signed.headers["set-cookie"]
    assert "httponly" in cookie.lower() and "samesite=strict" in cookie.lower()
    session = signed.cookies[SESSION_COOKIE]
    assert ALPHA_KEY not in cookie and ALPHA_KEY not in session
    with httpx.Client(base_url=keyed.url, timeout=60) as browser:
        own = browser.get("/cases", params={"project": ALPHA}, cookies={SESSION_COOKIE: session})
        assert own.status_code == 200, own.text
        # Neither the key itself nor a session whose expiry was moved is one.
        for forged in (ALPHA_KEY, "9" + session):
            got = browser.get("/cases", params={"project": ALPHA}, cookies={SESSION_COOKIE: forged})
            assert got.status_code == 401, forged
