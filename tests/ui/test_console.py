"""The console in Debian's chromium, against the real service and Neo4j: every page loads, and
what a person does there (filter, page, set a verdict, start / stop / resume a job, optimise a
prompt, run an audit) goes through the JSON API and lands in the graph.

``MEMTRACE_SCREENSHOTS=<folder>`` (``make screenshots``) saves a picture of each page there; the
README shows the ones in docs/screenshots/.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import httpx
import pytest
from memtrace_client import MemTraceClient, Tracer
from playwright.sync_api import Browser, Page

from tests.cases.test_verdict_counts import flip_after_attributing
from tests.prompts.test_prompts import EXTRACT_V1, attribute, optimizer, run_round
from tests.support.browser import Watched
from tests.support.llm_server import ScriptedLLM
from tests.support.servers import ServiceHandle
from tests.support.traces import DEMO_TRUTH, demo_batch

SCREENSHOTS = os.environ.get("MEMTRACE_SCREENSHOTS")
WIDE = (1280, 800)
NARROW = (390, 800)


def many_cases(project: str, n: int, system: str = "rag") -> dict[str, Any]:
    """``n`` failed cases, each answered by its own response operation, a minute apart."""
    ops, cases = [], []
    for i in range(n):
        ops.append(
            {
                "id": f"answer-op-{i:03d}",
                "name": "answer",
                "kind": "response",
                "system": system,
                "session_id": f"s{i % 3}",
                "ts": f"2026-06-{1 + i // 60:02d}T{(i // 60) % 24:02d}:{i % 60:02d}:00Z",
                "inputs": [{"id": f"q-{i:03d}", "kind": "query", "content": f"question {i}"}],
                "outputs": [{"id": f"a-{i:03d}", "kind": "answer", "content": f"zebra {i}"}],
            }
        )
        cases.append(
            {
                "id": f"c-{i:03d}",
                "question": f"Which animal is number {i}?",
                "expected_answer": "a dog",
                "verdict": "failed",
                "answer_unit": f"a-{i:03d}",
            }
        )
    return {"project": project, "units": [], "operations": ops, "cases": cases}


def open_page(watched: Watched, url: str) -> Page:
    response = watched.page.goto(url)
    assert response is not None and response.status == 200, url
    watched.page.wait_for_function("() => document.body?.dataset.ready === 'true'")
    return watched.page


def table_rows(page: Page, table: str) -> list[list[str]]:
    return [
        [cell.strip() for cell in row.locator("td").all_text_contents()]
        for row in page.locator(f"#{table} tbody tr").all()
    ]


def attribute_all(client: httpx.Client, project: str) -> None:
    for case in DEMO_TRUTH:
        assert client.post(f"/attribute/{case}", params={"project": project}).status_code == 200


# ---- projects and the dashboard ------------------------------------------------------------


def test_projects_page_lists_counts_and_leads_to_the_dashboard(
    client: httpx.Client, service: ServiceHandle, project: str, watched: Watched
) -> None:
    assert client.post("/traces", json=demo_batch(project)).status_code == 200
    page = open_page(watched, f"{service.url}/ui/projects")
    rows = {row[0]: row for row in table_rows(page, "projects")}
    # project, operations, units, cases, failed, failure share, last activity
    assert rows[project][1] == "16" and rows[project][3:6] == ["6", "5", "83.3%"]
    assert rows[project][6].startswith("2026-05-03")
    page.click(f"#projects a:text-is('{project}')")
    page.wait_for_function("() => document.body?.dataset.ready === 'true'")
    assert page.url.startswith(f"{service.url}/ui/dashboard?project={project}")
    assert watched.errors == []


def test_dashboard_counts_what_the_report_counts_and_links_into_the_cases(
    client: httpx.Client, service: ServiceHandle, project: str, watched: Watched
) -> None:
    assert client.post("/traces", json=demo_batch(project)).status_code == 200
    assert client.post("/attribute/case-3", params={"project": project}).status_code == 200
    assert client.post("/attribute/case-5", params={"project": project}).status_code == 200
    report = client.get("/report", params={"project": project}).json()
    page = open_page(watched, f"{service.url}/ui/dashboard?project={project}")
    totals = page.locator("#totals dd").all_text_contents()
    assert totals[:4] == ["6", "5", str(report["totals"]["attributed"]), "3 attribute them"]
    bars = {
        li.locator(".bar-label").text_content(): li.locator(".bar-count").text_content()
        for li in page.locator(".bars li").all()
    }
    assert bars == {r["error_type"]: str(r["count"]) for r in report["by_error_type"]}
    assert page.locator("#trend li").count() == len({r["period"] for r in report["trend"]}) >= 1
    assert page.locator("#by-system tbody tr").count() == len(report["by_system"])
    # A count is a way into the cases it counts.
    page.click(".bars a:text-is('DeletionError')")
    page.wait_for_function("() => document.body?.dataset.ready === 'true'")
    assert [row[0] for row in table_rows(page, "cases")] == ["case-3"]
    assert page.locator("#filter-error_type").input_value() == "DeletionError"
    assert watched.errors == []


def test_dashboard_counts_no_attribution_of_a_case_no_longer_failed(
    client: httpx.Client, service: ServiceHandle, project: str, watched: Watched
) -> None:
    flip_after_attributing(client, project)  # two attributed failed cases set passed
    totals = client.get("/report", params={"project": project}).json()["totals"]
    page = open_page(watched, f"{service.url}/ui/dashboard?project={project}")
    # cases, failed, attributed, not attributed yet: what GET /report (and the CLI) count
    shown = page.locator("#totals dd").all_text_contents()[:4]
    assert shown == ["6", "3", "3", "0 attribute them"]
    assert shown[1:3] == [str(totals["failed"]), str(totals["attributed"])]
    assert watched.errors == []


# ---- cases ---------------------------------------------------------------------------------


def test_case_list_searches_filters_pages_and_sets_verdicts(
    client: httpx.Client, service: ServiceHandle, project: str, watched: Watched
) -> None:
    assert client.post("/traces", json=demo_batch(project)).status_code == 200
    assert client.post("/traces", json=many_cases(project, 120)).status_code == 200
    page = open_page(watched, f"{service.url}/ui/cases?project={project}")
    first = table_rows(page, "cases")
    assert len(first) == 50 and page.text_content("#shown") == "cases 1–50"
    page.click("text=next →")
    page.wait_for_function("() => document.body?.dataset.ready === 'true'")
    second = table_rows(page, "cases")
    assert page.text_content("#shown") == "cases 51–100"
    assert {r[0] for r in first}.isdisjoint(r[0] for r in second)

    # Search the given answers, filter by session, newest first: the URL keeps the view.
    page.fill("#filter-q", "ZEBRA 11")
    page.fill("#filter-session_id", "s2")
    page.select_option("#filter-sort", "newest")
    page.click("#filters button[type=submit]")
    page.wait_for_function("() => document.body?.dataset.ready === 'true'")
    assert "q=ZEBRA+11" in page.url and "sort=newest" in page.url
    # zebra 11, zebra 110..119 hold "zebra 11"; of those, session s2 is i % 3 == 2.
    expected = [f"c-{i:03d}" for i in (119, 116, 113, 110, 11) if i % 3 == 2]
    assert [row[0] for row in table_rows(page, "cases")] == expected
    assert page.locator("text=next →").count() == 0

    # A verdict set on the list is stored through the API.
    target = expected[0]
    select = page.locator(f"select[aria-label='verdict of {target}']")
    select.select_option("passed")
    page.wait_for_function(
        "id => document.querySelector(`select[aria-label='verdict of ${id}']`)"
        ".dataset.saved === 'passed'",
        arg=target,
    )
    stored = client.get(f"/cases/{target}", params={"project": project}).json()
    assert stored["verdict"] == "passed"
    assert watched.errors == []


def test_case_view_fits_the_graph_and_attributes_with_the_chosen_judge(
    client: httpx.Client, service: ServiceHandle, project: str, browser: Browser
) -> None:
    assert client.post("/traces", json=demo_batch(project)).status_code == 200
    watched = Watched(browser, *WIDE)
    try:
        page = watched.open_case(service, project, "case-1")
        view = page.evaluate(
            """() => {
                const m = window.memtrace, net = m.network;
                const box = document.getElementById('graph').getBoundingClientRect();
                const outside = m.nodes.getIds().filter(key => {
                    const p = net.canvasToDOM(net.getPosition(key));
                    return p.x < 0 || p.y < 0 || p.x > box.width || p.y > box.height;
                });
                return {outside, nodes: m.nodes.length, scale: net.getScale(),
                        least: m.MIN_LABEL_PX / m.LABEL_PX};
            }"""
        )
        assert view["nodes"] > 10
        # Fitted: every node in view, unless that would draw the labels too small to read;
        # then they are drawn at the least readable size and the answer is in view.
        assert view["scale"] >= view["least"] - 1e-3
        if view["outside"]:
            assert view["scale"] == pytest.approx(view["least"], abs=1e-3), view
            assert "u:answer-1" not in view["outside"], view
        assert page.locator("#dashboard-link").get_attribute("href", timeout=1000)
        page.select_option("#judge-choice", "heuristic")
        page.click("#attribute-button")
        page.wait_for_function(
            "() => document.getElementById('attribute-status').textContent === 'done'"
        )
        assert page.text_content("#error-type") == DEMO_TRUTH["case-1"][0]
        assert "heuristic" in (page.text_content("#judge") or "")
        assert watched.errors == []
    finally:
        watched.context.close()


# ---- jobs ----------------------------------------------------------------------------------


@pytest.fixture
def llm_client(llm_service: ServiceHandle) -> Any:
    with httpx.Client(base_url=llm_service.url, timeout=60) as c:
        yield c


def test_jobs_page_starts_stops_and_resumes_a_job(
    llm_client: httpx.Client,
    llm_service: ServiceHandle,
    llm: ScriptedLLM,
    project: str,
    watched: Watched,
) -> None:
    assert llm_client.post("/traces", json=many_cases(project, 150)).status_code == 200
    page = open_page(watched, f"{llm_service.url}/ui/jobs?project={project}")
    assert page.text_content("#content") and page.locator("text=No jobs yet.").count() == 1
    llm.latency_s = 0.3  # an LLM judge's calls take time: the job runs long enough to stop
    try:
        page.select_option("#judge", "llm")
        page.click("#start button[type=submit]")
        page.wait_for_function(
            "() => document.querySelector('#jobs .badge')?.textContent === 'running'"
        )
        page.click("#jobs button[data-action=stop]")
        page.wait_for_function(
            "() => document.querySelector('#jobs .badge')?.textContent === 'stopped'",
            timeout=60_000,
        )
        stopped = llm_client.get("/attribution-jobs", params={"project": project}).json()[0]
        assert stopped["status"] == "stopped" and stopped["done"] < stopped["total"] == 150
    finally:
        llm.latency_s = 0
    page.click("#jobs button[data-action=resume]")
    page.wait_for_function(
        "() => document.querySelector('#jobs .badge')?.textContent === 'completed'",
        timeout=120_000,
    )
    done = llm_client.get("/attribution-jobs", params={"project": project}).json()[0]
    assert (done["status"], done["done"], done["judge"]) == ("completed", 150, "llm")
    assert page.locator("#jobs tbody tr").first.locator("progress").get_attribute("value") == "150"
    assert watched.errors == []


# ---- prompts and audits --------------------------------------------------------------------


def test_prompt_pages_show_versions_a_diff_and_optimise_with_progress(
    llm_client: httpx.Client,
    llm_service: ServiceHandle,
    llm: ScriptedLLM,
    project: str,
    watched: Watched,
    tmp_path: Path,
) -> None:
    tracer = Tracer(
        MemTraceClient(llm_service.url, project=project), system="toy", spool_dir=tmp_path
    )
    try:
        cases = run_round(tracer, ("fact-extraction", EXTRACT_V1), 2, "ui")
    finally:
        tracer.close()
    attribute(llm_client, project, cases)
    page = open_page(watched, f"{llm_service.url}/ui/prompts?project={project}")
    rows = {row[1]: row for row in table_rows(page, "prompts")}
    assert rows["fact-extraction@1 (newest)"][3:6] == ["2", "2", "ExtractionError 2"]

    # Its failures are a way into the cases blamed on it.
    page.click("#prompts td:nth-child(5) a")
    page.wait_for_function("() => document.body?.dataset.ready === 'true'")
    assert sorted(row[0] for row in table_rows(page, "cases")) == sorted(cases)
    page.go_back()
    page.wait_for_function("() => document.body?.dataset.ready === 'true'")
    page.click("#prompts a:text-is('fact-extraction')")
    page.wait_for_function("() => document.body?.dataset.ready === 'true'")
    assert page.text_content("#version-1 pre") == EXTRACT_V1
    llm.script["answer"] = optimizer()  # type: ignore[attr-defined]
    page.click("#optimise")
    page.wait_for_function(
        "() => document.getElementById('optimise-status').textContent.startsWith('done')"
    )
    assert "fact-extraction@2" in (page.text_content("#optimise-status") or "")
    page.reload()
    page.wait_for_function("() => document.body?.dataset.ready === 'true'")
    added = page.locator("#diff .added").all_text_contents()
    assert any("Keep every date and time exactly" in line for line in added)
    assert page.locator("#version-2 dd").nth(3).locator("a").count() == 2  # motivated by
    assert watched.errors == []


def test_audits_page_runs_an_audit_and_links_its_cases(
    client: httpx.Client, service: ServiceHandle, project: str, watched: Watched
) -> None:
    assert client.post("/traces", json=demo_batch(project)).status_code == 200
    expected = client.get("/audits/deleted_then_needed", params={"project": project}).json()
    assert expected["rows"]  # the demo deletes a memory a later question needs
    page = open_page(watched, f"{service.url}/ui/audits?project={project}")
    assert page.locator("section.audit").count() == len(client.get("/audits").json())
    panel = page.locator("#audit-deleted_then_needed")
    panel.locator("button[type=submit]").click()
    panel.locator("table.audit-rows").wait_for()
    linked = panel.locator("table.audit-rows a[href*='/ui/cases/']").all_text_contents()
    assert linked == [row["case"] for row in expected["rows"]]
    # Unit and operation ids lead to their own pages, and from there on through the graph.
    deletion = expected["rows"][0]["deletion"]
    panel.locator(f"table.audit-rows a[href*='/ui/operations/']:text-is('{deletion}')").click()
    page.wait_for_function("() => document.body?.dataset.ready === 'true'")
    assert page.text_content("#title") == f"Operation {deletion}"
    page.locator("#node-facts a[href*='/ui/units/']").first.click()
    page.wait_for_function("() => document.body?.dataset.ready === 'true'")
    assert (page.text_content("#title") or "").startswith("Unit ")
    assert page.locator("#node-content").count() == 1
    assert watched.errors == []


# ---- every page: sizes, keyboard, screenshots ----------------------------------------------

PAGES = ("projects", "dashboard", "cases", "sessions", "prompts", "audits", "jobs")


def test_every_page_fits_wide_and_narrow_windows_and_takes_the_keyboard(
    client: httpx.Client, service: ServiceHandle, project: str, browser: Browser
) -> None:
    assert client.post("/traces", json=demo_batch(project)).status_code == 200
    attribute_all(client, project)
    folder = Path(SCREENSHOTS) if SCREENSHOTS else None
    for width, height in (WIDE, NARROW):
        watched = Watched(browser, width, height)
        try:
            for name in PAGES:
                page = open_page(watched, f"{service.url}/ui/{name}?project={project}")
                overflow = page.evaluate(
                    "() => document.documentElement.scrollWidth - window.innerWidth"
                )
                assert overflow <= 1, f"{name} at {width}px is {overflow}px too wide"
                if folder and (width, height) == WIDE:
                    folder.mkdir(parents=True, exist_ok=True)
                    page.screenshot(path=str(folder / f"{name}.png"), full_page=False)
                page.keyboard.press("Tab")
                assert page.evaluate("document.activeElement.className") == "skip"
                page.keyboard.press("Tab")
                assert page.evaluate("document.activeElement.textContent") == "MemTrace"
            page = watched.open_case(service, project, "case-3")
            if folder and (width, height) == WIDE:
                page.screenshot(path=str(folder / "case.png"))
            assert watched.errors == []
        finally:
            watched.context.close()
