"""The case view in the browser: HTTP answers, then Debian's chromium driven by Playwright.

The browser is the system's chromium (``/usr/bin/chromium``, or ``MEMTRACE_TEST_CHROMIUM``), which
``make test`` installs from Debian when it is missing; Playwright never downloads a browser here.
A missing browser fails these tests (it does not skip them): a skipped browser test would hide
that the page was never drawn.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import httpx
from playwright.sync_api import Page

from service.ui.assets import vis_network
from tests.support.browser import Watched
from tests.support.servers import ServiceHandle
from tests.support.traces import DEMO_TRUTH, demo_batch

# Where the case view screenshot is copied for a person to look at, when asked to.
SCREENSHOT_COPY = os.environ.get("MEMTRACE_TEST_SCREENSHOT")
BLAMED_FILL = "#d62728"  # case.js MARK.blamed
PATH_COLOUR = "#ff7f0e"  # case.js MARK.path
HOSTILE = "<img src=x onerror=alert(1)>"


# ---- HTTP ------------------------------------------------------------------------------------


def test_case_page_is_html_with_the_case_as_inert_json(client: httpx.Client, project: str) -> None:
    assert client.post("/traces", json=demo_batch(project)).status_code == 200
    page = client.get("/ui/cases/case-2", params={"project": project})
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    assert "script-src 'self'" in page.headers["content-security-policy"]
    assert page.headers["cache-control"] == "no-store"
    assert '<script type="application/json" id="memtrace-data">' in page.text
    assert '"question":"What does Alice do for work?"' in page.text
    assert "../static/vis-network-" in page.text


def test_unknown_case_is_a_404_page_that_escapes_the_id(client: httpx.Client, project: str) -> None:
    missing = client.get("/ui/cases/<script>alert(1)<\\script>", params={"project": project})
    assert missing.status_code == 404
    assert missing.headers["content-type"].startswith("text/html")
    assert "404 not_found" in missing.text
    assert "no case &#x27;&lt;script&gt;alert(1)&lt;\\\\script&gt;&#x27; in project" in missing.text
    assert "<script>alert" not in missing.text
    bad_project = client.get("/ui/cases/case-1", params={"project": "no spaces"})
    assert bad_project.status_code == 422
    assert bad_project.headers["content-type"].startswith("text/html")  # every page error


def test_static_files_have_types_etags_and_caching(client: httpx.Client, project: str) -> None:
    assert client.post("/traces", json=demo_batch(project)).status_code == 200
    page = client.get("/ui/cases/case-1", params={"project": project}).text
    vis_name = page.split('src="../static/', 1)[1].split('"', 1)[0]
    assert vis_name.startswith("vis-network-") and vis_name.endswith(".min.js")
    vis = client.get(f"/ui/static/{vis_name}")
    assert vis.status_code == 200
    assert vis.headers["content-type"] == "text/javascript; charset=utf-8"
    assert vis.headers["cache-control"] == "public, max-age=31536000, immutable"
    # Byte for byte the release build in the installed pyvis wheel, licence header kept.
    assert vis.content == vis_network().js_path.read_bytes()
    assert vis.text.startswith("/**\r\n * vis-network\r\n")
    again = client.get(f"/ui/static/{vis_name}", headers={"If-None-Match": vis.headers["etag"]})
    assert (again.status_code, again.content) == (304, b"")
    own = client.get("/ui/static/case.js")
    assert own.headers["content-type"] == "text/javascript; charset=utf-8"
    assert own.headers["cache-control"] == "no-cache"
    assert "innerHTML" not in own.text
    css = client.get("/ui/static/ui.css")
    assert css.headers["content-type"] == "text/css; charset=utf-8"
    missing = client.get("/ui/static/secrets.py")
    assert missing.status_code == 404
    assert missing.json()["error"] == "not_found"


# ---- the browser -----------------------------------------------------------------------------


def click_node(page: Page, key: str) -> None:
    """A real mouse click on the node's centre, where vis-network drew it."""
    point = page.evaluate(
        """key => {
            const net = window.memtrace.network;
            const p = net.canvasToDOM(net.getPosition(key));
            const box = document.getElementById('graph').getBoundingClientRect();
            return {x: box.left + p.x, y: box.top + p.y};
        }""",
        key,
    )
    page.mouse.click(point["x"], point["y"])


def drawn_fill(page: Page, key: str) -> str:
    return str(
        page.evaluate("k => window.memtrace.network.body.nodes[k].options.color.background", key)
    )


def test_case_view_draws_the_graph_and_marks_the_blamed_operation(
    client: httpx.Client, service: ServiceHandle, project: str, watched: Watched, tmp_path: Path
) -> None:
    assert client.post("/traces", json=demo_batch(project)).status_code == 200
    error_type, blamed = DEMO_TRUTH["case-2"]
    result = client.post("/attribute/case-2", params={"project": project}).json()
    assert (result["error_type"], result["operation"]["id"]) == (error_type, blamed)
    subgraph = client.get("/cases/case-2/subgraph", params={"project": project}).json()
    page = watched.open_case(service, project, "case-2")

    # vis-network laid out and drew every node and edge of the subgraph.
    drawn = page.evaluate("Object.keys(window.memtrace.network.getPositions()).length")
    assert drawn == len(subgraph["nodes"]) == 25
    assert page.evaluate("window.memtrace.edges.length") == len(subgraph["edges"])
    assert page.locator("#graph canvas").count() == 1

    # Exactly one node is drawn in the blamed colour: the operation the ground truth names.
    red = page.evaluate(
        """fill => Object.entries(window.memtrace.network.body.nodes)
            .filter(([, n]) => n.options.color && n.options.color.background === fill)
            .map(([k]) => k)""",
        BLAMED_FILL,
    )
    assert red == [f"o:{blamed}"]
    assert page.evaluate("k => window.memtrace.nodes.get(k).roles", f"o:{blamed}") == [
        "path",
        "blamed",
    ]
    assert page.evaluate("k => window.memtrace.network.body.nodes[k].options.borderWidth", red[0])
    # The evidence path: its nodes carry the role, the edges between them are drawn thick.
    on_path = page.evaluate(
        "window.memtrace.nodes.get().filter(n => n.roles.includes('path')).map(n => n.id)"
    )
    assert sorted(on_path) == sorted(
        ("o:" if i.startswith("op-") else "u:") + i for i in result["evidence_path"]
    )
    thick = page.evaluate(
        """colour => window.memtrace.edges.get()
            .filter(e => e.color.color === colour && e.width === 4).length""",
        PATH_COLOUR,
    )
    assert thick == len(result["evidence_path"]) - 1
    answer_roles = page.evaluate("window.memtrace.nodes.get('u:answer-2').roles")
    assert answer_roles == ["answer"]

    # The header.
    assert page.text_content("#question") == "What does Alice do for work?"
    assert page.text_content("#expected") == "She is a nurse"
    assert page.text_content("#given") == "I don't know"
    assert page.text_content("#verdict") == "failed"
    assert page.text_content("#error-type") == error_type
    assert blamed in (page.text_content("#blamed-operation") or "")
    assert page.text_content("#reason") == result["reason"]
    assert page.locator("#decided-by").is_hidden()  # attributed: nothing left to decide
    assert page.locator("#evidence-path li").all_text_contents() == result["evidence_path"]

    # A click on a unit shows its content and attributes in the side panel.
    click_node(page, "u:mem-job@1")
    assert page.text_content("#panel-title") == "Unit mem-job@1"
    assert page.text_content("#panel-content") == "Works as a nurse at St. Mary's hospital"
    assert '"memory_id": "mem-job"' in (page.text_content("#panel-attributes") or "")
    assert "path" in (page.text_content("#panel-facts") or "")

    shot = tmp_path / "case-view.png"
    page.screenshot(path=str(shot))
    assert shot.stat().st_size > 10_000
    if SCREENSHOT_COPY:
        shutil.copyfile(shot, SCREENSHOT_COPY)
    assert watched.errors == []  # no script error, no CSP violation, no vis-network complaint


def test_attributing_from_the_page_redraws_the_marks(
    client: httpx.Client, service: ServiceHandle, project: str, watched: Watched
) -> None:
    assert client.post("/traces", json=demo_batch(project)).status_code == 200
    page = watched.open_case(service, project, "case-4")
    assert page.is_visible("#no-attribution")
    assert page.text_content("#attribute-button") == "Attribute"
    assert page.evaluate("window.memtrace.nodes.get().filter(n => n.roles.length > 1)") == []

    page.click("#attribute-button")
    page.wait_for_function(
        "() => document.getElementById('attribute-status').textContent === 'done'"
    )
    error_type, blamed = DEMO_TRUTH["case-4"]
    assert page.text_content("#error-type") == error_type
    assert drawn_fill(page, f"o:{blamed}") == BLAMED_FILL
    assert page.text_content("#attribute-button") == "Attribute again"
    # The page stored it through the API like any other caller.
    stored = client.get("/attributions", params={"project": project}).json()
    assert [(r["case_id"], r["operation"]["id"]) for r in stored] == [("case-4", blamed)]
    assert watched.errors == []


def test_case_list_links_to_the_case_view(
    client: httpx.Client, service: ServiceHandle, project: str, watched: Watched
) -> None:
    assert client.post("/traces", json=demo_batch(project)).status_code == 200
    assert client.post("/attribute/case-5", params={"project": project}).status_code == 200
    page = watched.page
    page.goto(f"{service.url}/ui/cases?project={project}&verdict=failed")
    page.wait_for_function("() => document.body?.dataset.ready === 'true'")
    rows = page.locator("#cases tbody tr")
    assert rows.count() == len(DEMO_TRUTH)  # the failed ones
    cells = rows.nth(4).locator("td")
    assert cells.nth(0).text_content() == "case-5"
    assert cells.nth(1).text_content() == "How old is Biscuit?"
    assert cells.nth(3).locator("select").input_value() == "failed"
    assert cells.nth(4).text_content() == "ResponseError"
    page.click("text=case-5")
    page.wait_for_function("() => document.body?.dataset.graphReady === 'true'")
    assert page.text_content("#question") == "How old is Biscuit?"
    assert drawn_fill(page, f"o:{DEMO_TRUTH['case-5'][1]}") == BLAMED_FILL
    assert watched.errors == []


def test_hostile_content_stays_text(
    client: httpx.Client, service: ServiceHandle, project: str, watched: Watched
) -> None:
    hostile_id = "<svg onload=alert(2)>"
    batch = {
        "project": project,
        "units": [{"id": hostile_id, "kind": "message", "content": HOSTILE}],
        "operations": [
            {
                "id": "op-extract",
                "name": HOSTILE,
                "kind": "extraction",
                "ts": "2026-01-01T00:00:00Z",
                "inputs": [hostile_id],
                "outputs": [
                    {
                        "id": "mem-1",
                        "kind": "memory",
                        "content": f"</script>{HOSTILE}",
                        "attributes": {"note": HOSTILE},
                    }
                ],
            },
            {
                "id": "op-answer",
                "name": "answer",
                "kind": "response",
                "ts": "2026-01-01T00:00:01Z",
                "inputs": ["mem-1"],
                "outputs": [{"id": "ans", "kind": "answer", "content": HOSTILE}],
            },
        ],
        "cases": [
            {
                "id": "evil",
                "question": HOSTILE,
                "expected_answer": "</script><script>alert(3)</script>",
                "answer_unit": "ans",
                "verdict": "failed",
            }
        ],
    }
    written = client.post("/traces", json=batch)
    assert written.status_code == 200, written.text
    raw = client.get("/ui/cases/evil", params={"project": project}).text
    assert "<img" not in raw and "</script><script>" not in raw and "<svg" not in raw

    page = watched.open_case(service, project, "evil")
    assert page.text_content("#question") == HOSTILE
    assert page.text_content("#expected") == "</script><script>alert(3)</script>"
    assert page.text_content("#given") == HOSTILE
    click_node(page, "u:mem-1")
    assert page.text_content("#panel-content") == f"</script>{HOSTILE}"
    assert HOSTILE in (page.text_content("#panel-attributes") or "")
    click_node(page, f"u:{hostile_id}")
    assert page.text_content("#panel-title") == f"Unit {hostile_id}"
    assert page.text_content("#panel-content") == HOSTILE
    click_node(page, "o:op-extract")
    assert HOSTILE in (page.text_content("#panel-facts") or "")
    page.wait_for_timeout(500)  # time for an injected image to fail to load, if there were one
    assert page.locator("img, svg, #panel script").count() == 0
    assert watched.dialogs == []
    assert watched.errors == []
