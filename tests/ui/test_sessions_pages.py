"""The session pages in Debian's chromium, against the real service and Neo4j: the list of a
project's sessions and its pages, a session's turns in order with what each caused, its cases
with verdicts linking to their case pages, and the ways in from the dashboard and a case."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx

from tests.support.browser import Watched
from tests.support.servers import Neo4jHandle, ServiceHandle, client_of_service
from tests.support.traces import demo_batch
from tests.ui.test_console import NARROW, open_page, table_rows


def _ready(watched: Watched) -> None:
    watched.page.wait_for_function("() => document.body?.dataset.ready === 'true'")


def test_the_sessions_page_counts_each_session_and_opens_it(
    client: httpx.Client, service: ServiceHandle, project: str, watched: Watched
) -> None:
    assert client.post("/traces", json=demo_batch(project)).status_code == 200
    page = open_page(watched, f"{service.url}/ui/sessions?project={project}")
    rows = table_rows(page, "sessions")
    # session, turns, operations, cases, failed, first, last
    assert [row[:5] for row in rows] == [
        ["qa", "0", "12", "6", "5"],
        ["s1", "3", "2", "0", "0"],
        ["s2", "3", "2", "0", "0"],
    ]
    assert rows[1][5:] == ["2026-05-01 10:00:00", "2026-05-01 10:04:00"]
    page.click("#sessions a:text-is('s2')")
    _ready(watched)
    assert page.url.startswith(f"{service.url}/ui/sessions/s2?project={project}")
    assert page.text_content("#title") == "Session s2"
    turns = page.locator("#turns li.turn")
    assert turns.count() == 3
    texts = page.locator("#turns .turn-text").all_text_contents()
    assert texts[0] == "Alice: Big news, I moved to Portland last month."
    # What the first turn caused: the extraction, with the facts it produced.
    first = turns.nth(0)
    assert first.locator(".caused > a").first.text_content() == "memory_system.extract_facts"
    assert first.locator(".outputs li").count() == 3
    assert page.locator("#no-cases").is_visible()
    assert watched.errors == []


def test_a_session_lists_its_failed_cases_first_and_links_each_case(
    client: httpx.Client, service: ServiceHandle, project: str, watched: Watched
) -> None:
    assert client.post("/traces", json=demo_batch(project)).status_code == 200
    assert client.post("/attribute/case-4", params={"project": project}).status_code == 200
    page = open_page(watched, f"{service.url}/ui/sessions/qa?project={project}")
    rows = table_rows(page, "session-cases")
    # case, question, given answer, verdict, attribution, blamed operation, answered
    assert [row[0] for row in rows] == ["case-1", "case-2", "case-3", "case-4", "case-5", "case-6"]
    assert [row[3] for row in rows] == ["failed"] * 5 + ["passed"]
    assert rows[3][4:6] == ["RetrievalError", "op-search-4"]
    assert rows[0][4] == "not attributed"
    assert page.locator("#no-turns").is_visible()
    assert page.locator("#session-operations tbody tr").count() == 12
    page.click("#session-cases a:text-is('case-4')")
    watched.page.wait_for_function("() => document.body?.dataset.graphReady === 'true'")
    assert page.url.startswith(f"{service.url}/ui/cases/case-4?project={project}")
    assert watched.errors == []


def test_a_case_page_links_to_its_session_and_back(
    client: httpx.Client, service: ServiceHandle, project: str, watched: Watched
) -> None:
    assert client.post("/traces", json=demo_batch(project)).status_code == 200
    page = watched.open_case(service, project, "case-2")
    link = page.locator("#session a.session-link")
    assert link.all_text_contents() == ["qa"]
    link.click()
    _ready(watched)
    assert page.url.startswith(f"{service.url}/ui/sessions/qa?project={project}")
    assert "case-2" in [row[0] for row in table_rows(page, "session-cases")]
    assert watched.errors == []


def test_a_case_whose_trace_names_no_session_says_so(
    client: httpx.Client, service: ServiceHandle, project: str, watched: Watched
) -> None:
    batch: dict[str, Any] = {
        "project": project,
        "operations": [
            {
                "id": "answer-op",
                "name": "answer",
                "kind": "response",
                "ts": "2026-06-01T10:00:00Z",
                "inputs": [{"id": "q", "kind": "query", "content": "Where?"}],
                "outputs": [{"id": "a", "kind": "answer", "content": "There"}],
            }
        ],
        "cases": [
            {"id": "lone", "question": "Where?", "expected_answer": "Here", "answer_unit": "a"}
        ],
    }
    assert client.post("/traces", json=batch).status_code == 200
    page = watched.open_case(service, project, "lone")
    assert page.locator("#session a").count() == 0
    assert (page.text_content("#session") or "").startswith("none named")
    listed = open_page(watched, f"{service.url}/ui/sessions?project={project}")
    assert listed.text_content("#empty") == "No session is named in this project."
    assert watched.errors == []


def test_the_dashboard_leads_to_the_sessions(
    client: httpx.Client, service: ServiceHandle, project: str, watched: Watched
) -> None:
    assert client.post("/traces", json=demo_batch(project)).status_code == 200
    page = open_page(watched, f"{service.url}/ui/dashboard?project={project}")
    page.click("#sessions-link")
    # the dashboard is ready too: wait for the sessions page before asking whether it is
    sessions = f"{service.url}/ui/sessions?project={project}"
    page.wait_for_url(lambda url: url.startswith(sessions))
    _ready(watched)
    assert [row[0] for row in table_rows(page, "sessions")] == ["qa", "s1", "s2"]
    assert watched.errors == []


def test_the_sessions_list_pages_with_its_cursor(
    client: httpx.Client, service: ServiceHandle, project: str, watched: Watched
) -> None:
    ops = [
        {
            "id": f"op-{i:02d}",
            "name": "extract",
            "kind": "extraction",
            "session_id": f"chat-{i:02d}",
            "ts": "2026-06-01T10:00:00Z",
            "inputs": [{"id": f"m-{i:02d}", "kind": "message", "content": f"hello {i}"}],
        }
        for i in range(52)
    ]
    assert client.post("/traces", json={"project": project, "operations": ops}).status_code == 200
    page = open_page(watched, f"{service.url}/ui/sessions?project={project}")
    assert len(table_rows(page, "sessions")) == 50
    page.click("nav.pager a:text-is('next →')")
    _ready(watched)
    assert [row[0] for row in table_rows(page, "sessions")] == ["chat-50", "chat-51"]
    assert page.locator("nav.pager a:text-is('next →')").count() == 0
    assert watched.errors == []


def test_a_session_page_fits_a_narrow_window(
    client: httpx.Client, service: ServiceHandle, project: str, browser: Any
) -> None:
    assert client.post("/traces", json=demo_batch(project)).status_code == 200
    watched = Watched(browser, *NARROW)
    try:
        for name in ("s1", "qa"):
            page = open_page(watched, f"{service.url}/ui/sessions/{name}?project={project}")
            overflow = page.evaluate(
                "() => document.documentElement.scrollWidth - window.innerWidth"
            )
            assert overflow <= 1, f"session {name} is {overflow}px too wide"
        assert watched.errors == []
    finally:
        watched.context.close()


def test_a_session_over_the_count_cap_shows_lower_bounds(
    neo4j: Neo4jHandle, workdir: Path, watched: Watched
) -> None:
    ops = [
        {
            "id": f"op-{session}-{i}",
            "name": "extract",
            "kind": "extraction",
            "session_id": session,
            "ts": f"2026-06-01T10:00:0{i}Z",
            "inputs": [{"id": f"m-{session}-{i}", "kind": "message", "content": f"hello {i}"}],
        }
        for session, n in (("long", 3), ("short", 1))
        for i in range(n)
    ]
    with client_of_service(neo4j, workdir, MEMTRACE_SESSION_COUNT_CAP="2") as capped:
        project = "capped-sessions-ui"
        body = {"project": project, "operations": ops}
        assert capped.post("/traces", json=body).status_code == 200
        page = open_page(watched, f"{capped.base_url}/ui/sessions?project={project}")
        rows = table_rows(page, "sessions")
        # session, turns, operations, cases, failed, first, last: a capped session's counts are
        # at least what they say, and its times are not read
        assert rows[0] == ["long", "≥ 2", "≥ 2", "≥ 0", "≥ 0", "", ""]
        assert rows[1][:5] == ["short", "1", "1", "0", "0"]
        page = open_page(watched, f"{capped.base_url}/ui/sessions/long?project={project}")
        facts = page.locator("#session-facts dd").all_text_contents()
        assert facts[:4] == ["≥ 2", "≥ 2", "≥ 0", "≥ 0"]
    assert watched.errors == []
