"""What surrounds the console's data (issue 33): the ways in (``/``, ``/ui``), a mistyped
project, the sign-in and error pages, the case page's navigation bar and narrow window, readable
graph labels, the jobs table, the audits page, and the judge check run from the console."""

from __future__ import annotations

import time
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, Page

from service.attribution.judge_probes import probe_set
from tests.cases.test_subgraph_budget import _store
from tests.support.browser import Watched
from tests.support.keyed import A_KEY, A, B
from tests.support.llm_server import ScriptedLLM, oracle_from_ids
from tests.support.servers import ServiceHandle
from tests.support.traces import demo_batch
from tests.ui.test_console import NARROW, WIDE, open_page
from tests.ui.test_ui import click_node

STYLESHEET = '<link rel="stylesheet" href="/ui/static/ui.css">'
PAPER = "rgb(247, 248, 250)"  # ui.css --paper: the stylesheet was applied
LABEL_PX, MIN_LABEL_PX = 14, 11  # case.js: a label's size at zoom 1, the least it is drawn


def styled(page: Page) -> bool:
    return bool(page.evaluate("getComputedStyle(document.body).backgroundColor") == PAPER)


# ---- ways in -------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/", "/ui", "/ui/"])
def test_the_ways_in_lead_to_the_projects_page(client: httpx.Client, path: str) -> None:
    home = client.get(path, follow_redirects=True)
    assert home.status_code == 200
    assert home.url.path == "/ui/projects" and not home.url.params
    assert '"page":"projects"' in home.text


@pytest.mark.parametrize("page", ["dashboard", "cases", "prompts", "audits", "jobs"])
def test_a_mistyped_project_is_a_404_page_naming_it(
    client: httpx.Client, project: str, page: str
) -> None:
    client.post("/traces", json=demo_batch(project)).raise_for_status()
    assert client.get(f"/ui/{page}", params={"project": project}).status_code == 200
    typo = project + "x"
    missing = client.get(f"/ui/{page}", params={"project": typo})
    assert missing.status_code == 404
    assert missing.headers["content-type"].startswith("text/html")
    assert f"no such project &#x27;{typo}&#x27;" in missing.text
    assert STYLESHEET in missing.text


def test_error_pages_are_styled(service: ServiceHandle, watched: Watched, project: str) -> None:
    response = watched.page.goto(f"{service.url}/ui/dashboard?project={project}")
    assert response is not None and response.status == 404
    assert styled(watched.page)
    assert watched.page.locator(".console-head a.brand").count() == 1
    assert "no such project" in (watched.page.text_content("#error-message") or "")


def test_sign_in_and_refusal_pages_are_styled(keyed: ServiceHandle, browser: Browser) -> None:
    watched = Watched(browser, *NARROW)
    try:
        page = watched.page
        response = page.goto(f"{keyed.url}/")
        assert response is not None and response.status == 200
        assert page.url.startswith(f"{keyed.url}/ui/login")  # via /ui/projects, keys on
        assert styled(page)
        page.fill("input[name=key]", A_KEY)
        page.click("button[type=submit]")
        page.wait_for_function("() => document.body?.dataset.ready === 'true'")
        assert page.url == f"{keyed.url}/ui/projects"
        refused = page.goto(f"{keyed.url}/ui/dashboard?project={B}")
        assert refused is not None and refused.status == 403
        assert styled(page)
        assert page.evaluate("document.documentElement.scrollWidth") <= NARROW[0]
        assert open_page(watched, f"{keyed.url}/ui/dashboard?project={A}")
    finally:
        watched.context.close()


# ---- the case page -------------------------------------------------------------------------


def test_case_page_has_the_console_bar_and_fits_390_pixels(
    client: httpx.Client, service: ServiceHandle, project: str, browser: Browser
) -> None:
    client.post("/traces", json=demo_batch(project)).raise_for_status()
    assert client.post("/attribute/case-3", params={"project": project}).status_code == 200
    for width, height in (NARROW, WIDE):
        watched = Watched(browser, width, height)
        try:
            page = watched.open_case(service, project, "case-3")
            wide = page.evaluate("document.documentElement.scrollWidth")
            assert wide <= width, f"the case page is {wide}px wide in a {width}px window"
            links = page.locator("#nav a")
            assert links.all_text_contents() == [
                "Projects", "Dashboard", "Cases", "Sessions", "Prompts", "Audits", "Jobs",
            ]  # fmt: skip
            for href in [a.get_attribute("href") or "" for a in links.all()[1:]]:
                assert href.endswith(f"?project={project}"), href
            assert page.text_content("#project-name") == f"project {project}"
            page.locator("#nav a", has_text="Jobs").click()
            page.wait_for_function("() => document.body?.dataset.ready === 'true'")
            assert page.url.startswith(f"{service.url}/ui/jobs?project={project}")
            assert watched.errors == []
        finally:
            watched.context.close()


def fan_case(project: str, messages: int = 8) -> dict[str, Any]:
    """A case whose answer rests on ``messages`` extracted memories: 3 * messages + 5 nodes."""
    ops: list[dict[str, Any]] = []
    memories = []
    for i in range(messages):
        memories.append(f"mem-{i}")
        ops.append(
            {
                "id": f"extract-{i}",
                "name": "extract_facts",
                "kind": "extraction",
                "ts": f"2026-06-01T10:{i:02d}:00Z",
                "inputs": [{"id": f"msg-{i}", "kind": "message", "content": f"message {i}"}],
                "outputs": [{"id": f"mem-{i}", "kind": "memory", "content": f"fact {i}"}],
            }
        )
    ops.append(
        {
            "id": "retrieve",
            "name": "retrieve",
            "kind": "retrieval",
            "ts": "2026-06-01T11:00:00Z",
            "inputs": [{"id": "q", "kind": "query", "content": "which facts?"}, *memories],
            "outputs": [{"id": "ctx", "kind": "context", "content": "some facts"}],
        }
    )
    ops.append(
        {
            "id": "respond",
            "name": "respond",
            "kind": "response",
            "ts": "2026-06-01T11:01:00Z",
            "inputs": ["ctx"],
            "outputs": [{"id": "answer", "kind": "answer", "content": "fact 99"}],
        }
    )
    case = {
        "id": "fan",
        "question": "Which fact?",
        "expected_answer": "fact 3",
        "verdict": "failed",
        "answer_unit": "answer",
    }
    return {"project": project, "units": [], "operations": ops, "cases": [case]}


def test_labels_stay_readable_when_a_big_graph_is_fitted(
    client: httpx.Client, service: ServiceHandle, project: str, browser: Browser
) -> None:
    client.post("/traces", json=fan_case(project, 8)).raise_for_status()
    watched = Watched(browser, *WIDE)
    try:
        page = watched.open_case(service, project, "fan")
        shown = page.evaluate(
            """() => {
                const m = window.memtrace;
                const box = document.getElementById('graph').getBoundingClientRect();
                const answer = m.network.canvasToDOM(m.network.getPosition('u:answer'));
                return {
                    nodes: m.nodes.length,
                    scale: m.network.getScale(),
                    answer_in_view: answer.x >= 0 && answer.y >= 0
                        && answer.x <= box.width && answer.y <= box.height,
                };
            }"""
        )
        assert shown["nodes"] == 29
        label_px = shown["scale"] * LABEL_PX
        assert label_px >= MIN_LABEL_PX - 0.01, f"labels drawn {label_px:.1f} px high"
        assert shown["answer_in_view"], shown
        assert watched.errors == []
    finally:
        watched.context.close()


# ---- jobs and audits -----------------------------------------------------------------------


def _lines(page: Page, selector: str) -> list[int]:
    """How many lines of text each element matching ``selector`` takes."""
    counted: list[int] = page.evaluate(
        """selector => [...document.querySelectorAll(selector)].map(el => {
            const range = document.createRange();
            range.selectNodeContents(el);
            return new Set([...range.getClientRects()].map(r => Math.round(r.top))).size;
        })""",
        selector,
    )
    return counted


def test_jobs_table_keeps_ids_and_statuses_on_one_line(
    client: httpx.Client, service: ServiceHandle, project: str, browser: Browser
) -> None:
    client.post("/traces", json=demo_batch(project)).raise_for_status()
    started = client.post("/attribution-jobs", params={"project": project}, json={})
    assert started.status_code in (200, 201, 202), started.text
    for _ in range(120):
        jobs = client.get("/attribution-jobs", params={"project": project}).json()
        if jobs[0]["status"] == "completed":
            break
        time.sleep(0.5)
    assert jobs[0]["status"] == "completed"
    watched = Watched(browser, *NARROW)
    try:
        page = open_page(watched, f"{service.url}/ui/jobs?project={project}")
        for selector in ("#jobs td:nth-child(1)", "#jobs .badge", "#jobs td:nth-child(9)"):
            assert _lines(page, selector) == [1], selector
            white_space = page.eval_on_selector(selector, "e => getComputedStyle(e).whiteSpace")
            assert white_space == "nowrap", selector
        assert page.evaluate("document.documentElement.scrollWidth") <= NARROW[0]
        assert watched.errors == []
    finally:
        watched.context.close()


def test_audits_page_writes_no_stray_null(
    client: httpx.Client, service: ServiceHandle, project: str, watched: Watched
) -> None:
    client.post("/traces", json=demo_batch(project)).raise_for_status()
    page = open_page(watched, f"{service.url}/ui/audits?project={project}")
    panel = page.locator("#audit-deleted_then_needed")
    panel.locator("button[type=submit]").click()
    panel.locator("table.audit-rows").wait_for()
    out = panel.locator(".audit-out")
    assert "null" not in (out.inner_text() or "")
    assert "null" not in (page.locator("#content").inner_text() or "")
    assert watched.errors == []


def test_the_judge_check_runs_from_the_jobs_page(
    llm_service: ServiceHandle, llm: ScriptedLLM, project: str, watched: Watched
) -> None:
    carriers = {u.unit.id for p in probe_set() for u in p.units if u.carries}
    units = sum(len(p.units) for p in probe_set())
    with httpx.Client(base_url=llm_service.url, timeout=60) as c:
        c.post("/traces", json=demo_batch(project)).raise_for_status()
    llm.clear_failures()
    llm.script["answer"] = oracle_from_ids(carriers)  # type: ignore[attr-defined]
    try:
        page = open_page(watched, f"{llm_service.url}/ui/jobs?project={project}")
        page.check("#judge-check-record")
        page.click("#judge-check button[type=submit]")
        page.wait_for_function(
            "() => document.getElementById('judge-check-status').textContent.startsWith('done')",
            timeout=120_000,
        )
        facts = dict(
            zip(
                page.locator("#judge-check-result dt").all_text_contents(),
                page.locator("#judge-check-result dd").all_text_contents(),
                strict=True,
            )
        )
        assert facts["model"] == "scripted" and facts["accuracy"] == "100.0%"
        assert facts["answered"] == f"{units} of {units} units (100.0%)"
        with httpx.Client(base_url=llm_service.url, timeout=60) as c:
            recorded = c.get("/judge/check", params={"project": project})
        assert recorded.status_code == 200 and recorded.json()["accuracy"] == 1.0
        assert watched.errors == []
    finally:
        llm.script["answer"] = oracle_from_ids(set())  # type: ignore[attr-defined]


def test_the_case_page_says_which_values_were_cut(
    client: httpx.Client, service: ServiceHandle, project: str, watched: Watched
) -> None:
    _store(client, project, units=3)  # three units of 1 MB
    page = watched.open_case(service, project, "heavy")
    assert page.text_content("#graph-note") == (
        "3 long values are cut to their first 10,000 characters (click a node to see which)."
    )
    click_node(page, "u:big-01")
    assert page.text_content("#panel-cut") == "cut: 10,000 of 1,000,000 characters"
    assert len(page.text_content("#panel-content") or "") == 10_000
    click_node(page, "u:heavy-answer")
    assert page.locator("#panel-cut").is_hidden()
    assert watched.errors == []
