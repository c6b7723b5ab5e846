"""GET /report, GET /report.html and `memtrace report` against the running service and Neo4j.

Expected numbers are computed from what GET /attributions and GET /cases return, never typed in,
except where the example trace's ground truth is the point (one case of each error type).
"""

from __future__ import annotations

import base64
import json
import re
from collections import Counter
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from service.reports.models import (
    CostTotals,
    ErrorTypeCount,
    Report,
    ReportFilters,
    ReportTotals,
    TrendRow,
)
from service.reports.plots import ERROR_COLOURS, MAX_BARS, errors_over_time
from tests.support.cli import memtrace
from tests.support.servers import ServiceHandle
from tests.support.traces import demo_batch

ERROR_TYPES = ["ExtractionError", "UpdateError", "DeletionError", "RetrievalError", "ResponseError"]
UPDATE_OP = "memory_system.update_memory_decision"
HOSTILE = '<script>alert("x")</script>'


def demo_with_prompt(project: str) -> dict[str, Any]:
    """The example trace, with a prompt template id on the update that breaks case-2 and case-3."""
    batch = demo_batch(project)
    op = next(o for o in batch["operations"] if o["id"] == "op-update-2")
    op["attributes"] = {**(op.get("attributes") or {}), "prompt": "sha1:update-v1"}
    return batch


def rag_batch(project: str) -> dict[str, Any]:
    """A second system, a day later: its extraction (named like a script) drops the cat's name."""
    day = "2026-05-04T09:0"
    return {
        "project": project,
        "units": [
            {
                "id": "x-msg",
                "kind": "message",
                "content": "Bob: my cat is called Tom",
                "ts": day + "0:00Z",
            },
            {"id": "x-query", "kind": "query", "content": "What is Bob's cat called?"},
        ],
        "operations": [
            {
                "id": "x-extract",
                "name": HOSTILE,
                "kind": "extraction",
                "system": "rag",
                "ts": day + "1:00Z",
                "attributes": {"prompt": "<b>extract-v2</b>"},
                "inputs": ["x-msg"],
                "outputs": [
                    {
                        "id": "x-mem",
                        "kind": "memory",
                        "content": "Bob has a pet",
                        "attributes": {"memory_id": "x-m"},
                    }
                ],
            },
            {
                "id": "x-search",
                "name": "rag.retrieve",
                "kind": "retrieval",
                "system": "rag",
                "ts": day + "2:00Z",
                "inputs": ["x-query", "x-mem"],
                "outputs": [{"id": "x-context", "kind": "context", "content": "Bob has a pet"}],
            },
            {
                "id": "x-answer",
                "name": "rag.answer",
                "kind": "response",
                "system": "rag",
                "ts": day + "3:00Z",
                "inputs": ["x-query", "x-context"],
                "outputs": [
                    {
                        "id": "x-ans",
                        "kind": "answer",
                        "content": "I don't know",
                        "ts": day + "3:00Z",
                    }
                ],
            },
        ],
        "cases": [
            {
                "id": "case-x",
                "question": "What is Bob's cat called?",
                "expected_answer": "Tom",
                "answer_unit": "x-ans",
                "verdict": "failed",
                "evidence_units": ["x-msg"],
            }
        ],
    }


def ingest(client: httpx.Client, *batches: dict[str, Any]) -> None:
    for batch in batches:
        response = client.post("/traces", json=batch)
        assert response.status_code == 200, response.text


def attribute_all(client: httpx.Client, project: str, *extra: str) -> None:
    failed = client.get("/cases", params={"project": project, "verdict": "failed"}).json()
    for case_id in [c["id"] for c in failed] + list(extra):
        response = client.post(f"/attribute/{case_id}", params={"project": project})
        assert response.status_code == 200, response.text


def get_report(client: httpx.Client, project: str, **params: str) -> dict[str, Any]:
    response = client.get("/report", params={"project": project, **params})
    assert response.status_code == 200, response.text
    return dict(response.json())


def stored(client: httpx.Client, project: str, **params: str) -> list[dict[str, Any]]:
    response = client.get("/attributions", params={"project": project, "limit": 1000, **params})
    assert response.status_code == 200, response.text
    return list(response.json())


def test_report_counts_are_the_stored_attributions(client: httpx.Client, project: str) -> None:
    ingest(client, demo_with_prompt(project))
    before = get_report(client, project)
    assert before["totals"] == {
        "cases": 6,
        "failed": 5,
        "attributions": 0,
        "attributed": 0,
        "inconclusive": 0,
        "not_failed": 0,
        "unanswerable": 0,
        "failed_unattributed": 5,
    }
    attribute_all(client, project, "case-6")  # the passed case too: one not_failed attribution

    report = get_report(client, project)
    results = stored(client, project)
    cases = client.get("/cases", params={"project": project}).json()
    status = Counter(r["status"] for r in results)
    attributed = [r for r in results if r["status"] == "attributed"]
    assert report["totals"] == {
        "cases": len(cases),
        "failed": sum(c["verdict"] == "failed" for c in cases),
        "attributions": len(results),
        "attributed": status["attributed"],
        "inconclusive": status["inconclusive"],
        "not_failed": status["not_failed"],
        "unanswerable": status["unanswerable"],
        "failed_unattributed": 0,
    }
    assert report["totals"]["not_failed"] == 1

    by_type = Counter(r["error_type"] for r in attributed)
    assert {row["error_type"]: row["count"] for row in report["by_error_type"]} == {
        t: by_type[t] for t in ERROR_TYPES
    }
    assert [row["count"] for row in report["by_error_type"]] == [1, 1, 1, 1, 1]
    assert all(row["share"] == 0.2 for row in report["by_error_type"])

    by_operation = Counter(r["operation"]["name"] for r in attributed)
    assert {op["operation_name"]: op["count"] for op in report["top_operations"]} == by_operation
    first = report["top_operations"][0]
    assert (first["operation_name"], first["system"], first["count"]) == (
        UPDATE_OP,
        "mem0-classic",
        2,
    )
    assert first["share"] == 0.4
    assert first["operations"] == 1  # both blame op-update-2
    by_row = Counter((r["error_type"], r["operation"]["name"]) for r in attributed)
    assert {(r["error_type"], r["operation_name"]): r["count"] for r in report["rows"]} == by_row
    assert {r["system"] for r in report["rows"]} == {"mem0-classic"}
    assert report["by_system"] == [
        {"system": "mem0-classic", "count": 5, "by_error_type": dict.fromkeys(ERROR_TYPES, 1)}
    ]
    assert report["top_prompts"] == [
        {"prompt": "sha1:update-v1", "count": 2, "share": 0.4, "operation_names": [UPDATE_OP]}
    ]

    cost = report["cost"]
    assert cost["attributions"] == len(results)
    for key in ("llm_calls", "input_tokens", "output_tokens", "seconds"):
        total = sum(r["cost"][key] for r in results)
        assert cost[key] == pytest.approx(total)
        assert cost[f"mean_{key}"] == pytest.approx(total / len(results))
    assert cost["seconds"] > 0  # the heuristic judge spends time, if no tokens

    # Every answer of the example is given on 2026-05-03.
    assert report["trend"] == [
        {"period": "2026-05-03", "error_type": t, "count": 1} for t in ERROR_TYPES
    ]


def test_system_filter_and_time_window(client: httpx.Client, project: str) -> None:
    ingest(client, demo_with_prompt(project), rag_batch(project))
    attribute_all(client, project)

    rag = get_report(client, project, system="rag")
    rag_results = stored(client, project, system="rag")
    assert len(rag_results) == 1
    [result] = rag_results
    assert result["status"] == "attributed", result
    assert (rag["totals"]["cases"], rag["totals"]["failed"]) == (1, 1)
    assert rag["totals"]["attributed"] == 1
    assert [(s["system"], s["count"]) for s in rag["by_system"]] == [("rag", 1)]
    assert {r["error_type"]: r["count"] for r in rag["by_error_type"] if r["count"]} == {
        result["error_type"]: 1
    }
    assert [(op["operation_name"], op["count"]) for op in rag["top_operations"]] == [
        (result["operation"]["name"], 1)
    ]

    mem0 = get_report(client, project, system="mem0-classic")
    assert mem0["totals"]["cases"] == 6
    assert mem0["totals"]["attributed"] == len(stored(client, project, system="mem0-classic"))
    everything = get_report(client, project)
    assert everything["totals"]["attributed"] == len(stored(client, project, status="attributed"))
    assert {s["system"]: s["count"] for s in everything["by_system"]} == {
        "mem0-classic": 5,
        "rag": 1,
    }
    none = get_report(client, project, system="no-such-system")
    assert none["totals"]["cases"] == 0

    # The rag case was answered on 2026-05-04, the example's on 2026-05-03.
    later = get_report(client, project, since="2026-05-04T00:00:00Z")
    assert later["totals"]["cases"] == 1
    assert later["by_system"][0]["system"] == "rag"
    earlier = get_report(client, project, until="2026-05-04")  # no zone: UTC
    assert (earlier["totals"]["cases"], earlier["totals"]["attributed"]) == (6, 5)
    assert {row["period"] for row in everything["trend"]} == {"2026-05-03", "2026-05-04"}
    weekly = get_report(client, project, bucket="week")
    # 2026-05-03 is a Sunday: its week starts on 2026-04-27; Monday 2026-05-04 starts the next.
    assert {row["period"] for row in weekly["trend"]} == {"2026-04-27", "2026-05-04"}
    assert sum(row["count"] for row in weekly["trend"]) == 6

    empty_window = client.get(
        "/report", params={"project": project, "since": "2026-05-04", "until": "2026-05-03"}
    )
    assert empty_window.status_code == 422
    assert "since must be before until" in empty_window.json()["message"]
    assert client.get("/report", params={"project": project, "bucket": "year"}).status_code == 422


def test_empty_project_gives_zeros(client: httpx.Client, project: str) -> None:
    report = get_report(client, project)
    assert report["project"] == project
    assert set(report["totals"].values()) == {0}
    assert [row["count"] for row in report["by_error_type"]] == [0] * 5
    assert report["rows"] == report["by_system"] == report["top_operations"] == []
    assert report["top_prompts"] == report["trend"] == []
    assert report["cost"]["attributions"] == 0
    assert report["cost"]["mean_seconds"] == 0
    page = client.get("/report.html", params={"project": project})
    assert page.status_code == 200
    assert len(plots(page.text)) == 3
    assert '<div class="n">0</div><div class="k">failed</div>' in page.text


def plots(page: str) -> list[str]:
    """The decoded SVG documents of the page's embedded plot images."""
    uris = re.findall(
        r'<img class="plot" alt="[^"]*" src="data:image/svg\+xml;base64,([^"]+)"', page
    )
    return [base64.b64decode(uri).decode("utf-8") for uri in uris]


def check_page(page: str, project: str) -> None:
    """The numbers of the demo + rag report are in the page's tables, and the hostile names are
    escaped."""
    svgs = plots(page)
    assert len(svgs) >= 3
    assert all(svg.lstrip().startswith(("<?xml", "<svg")) and "</svg>" in svg for svg in svgs)
    assert f"MemTrace error report: {project}" in page
    # Totals cards: 7 cases, 6 failed, 6 attributed.
    assert '<div class="n">7</div><div class="k">cases</div>' in page
    assert '<div class="n">6</div><div class="k">attributed</div>' in page
    # The most blamed operation's row, and the per-system row of the example.
    assert (
        f'<tr><td>{UPDATE_OP}</td><td>mem0-classic</td><td class="num">2</td>'
        '<td class="num">33.3%</td><td class="num">1</td></tr>'
    ) in page
    assert '<tr><td>mem0-classic</td><td class="num">1</td>' in page
    assert "<tr><td>sha1:update-v1</td><td>memory_system.update_memory_decision</td>" in page
    # User data is text, never markup.
    assert "<script" not in page.lower()
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in page
    assert "&lt;b&gt;extract-v2&lt;/b&gt;" in page and "<b>" not in page


def test_html_report_from_the_endpoint_and_the_cli(
    client: httpx.Client, service: ServiceHandle, project: str, tmp_path: Path
) -> None:
    ingest(client, demo_with_prompt(project), rag_batch(project))
    attribute_all(client, project)
    [rag] = stored(client, project, system="rag")
    assert rag["operation"]["name"] == HOSTILE  # the extraction drops the cat's name

    page = client.get("/report.html", params={"project": project})
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    check_page(page.text, project)

    path = tmp_path / "report.html"
    done = memtrace("report", "--project", project, "--url", service.url, "--html", str(path))
    assert done.returncode == 0, done.stderr
    check_page(path.read_text(encoding="utf-8"), project)
    assert f"wrote {path}" in done.stderr
    # The terminal tables carry the same numbers.
    row = next(line for line in done.stdout.splitlines() if UPDATE_OP in line and "%" in line)
    assert re.search(r"mem0-classic\s*│\s*2\s*│\s*33\.3%", row), row

    as_json = memtrace("report", "--project", project, "--url", service.url, "--json")
    assert as_json.returncode == 0, as_json.stderr
    printed = json.loads(as_json.stdout)
    served = get_report(client, project)
    for key in ("totals", "rows", "by_error_type", "by_system", "top_operations", "cost", "trend"):
        assert printed[key] == served[key]

    rag_only = memtrace(
        "report", "--project", project, "--url", service.url, "--system", "rag", "--json"
    )
    assert json.loads(rag_only.stdout)["totals"]["cases"] == 1
    refused = memtrace("report", "--project", project, "--url", service.url, "--bucket", "year")
    assert refused.returncode == 1
    assert "HTTP 422" in refused.stderr


def trend_report(trend: list[TrendRow]) -> Report:
    """A report of attributed failed cases holding only ``trend`` (for the trend plot)."""
    counts = Counter(row.error_type for row in trend for _ in range(row.count))
    n = sum(counts.values())
    zero = {"attributions": 0, "llm_calls": 0, "input_tokens": 0, "output_tokens": 0}
    return Report(
        project="p",
        generated_at=datetime.now(UTC),
        filters=ReportFilters(),
        totals=ReportTotals(
            cases=n,
            failed=n,
            attributions=n,
            attributed=n,
            inconclusive=0,
            not_failed=0,
            unanswerable=0,
            failed_unattributed=0,
        ),
        rows=[],
        by_error_type=[
            ErrorTypeCount(error_type=t, count=c, share=c / n) for t, c in sorted(counts.items())
        ],
        by_system=[],
        top_operations=[],
        top_prompts=[],
        trend=trend,
        cost=CostTotals(
            **zero,
            seconds=0.0,
            mean_llm_calls=0.0,
            mean_input_tokens=0.0,
            mean_output_tokens=0.0,
            mean_seconds=0.0,
        ),
    )


def svg_of(uri: str) -> str:
    return base64.b64decode(uri.split(",", 1)[1]).decode()


def test_a_trend_over_years_is_binned_not_drawn_day_by_day() -> None:
    """Ten years of daily attributions: the trend plot sums them into at most MAX_BARS bins
    (drawing 3,650 stacked days took half a minute per page on a 74k-operation graph)."""
    first = date(2016, 1, 1)
    trend = [
        TrendRow(period=first + timedelta(days=d), error_type="RetrievalError", count=1)
        for d in range(0, 3650, 3)
    ]
    report = trend_report(trend)
    svg = svg_of(errors_over_time(report))
    per_bin = -(-3650 // MAX_BARS)
    assert f"Error types per {per_bin} days" in svg
    assert len(svg) < 400_000


def test_the_trend_plot_draws_only_the_bars_that_have_a_height() -> None:
    """Three attributed days years apart make MAX_BARS bins, of which three hold a case: three
    bars are drawn, not a bar per bin and error type (on the 74k-operation benchmark graph the
    empty ones were most of the time of GET /report.html)."""
    trend = [
        TrendRow(period=date(2016, 1, 1), error_type="RetrievalError", count=2),
        TrendRow(period=date(2021, 1, 1), error_type="UpdateError", count=1),
        TrendRow(period=date(2025, 12, 1), error_type="RetrievalError", count=1),
    ]
    svg = svg_of(errors_over_time(trend_report(trend)))
    assert "Error types per" in svg and " days" in svg  # binned: the span is past MAX_BARS
    # Each colour is drawn once per bar and once in the legend.
    assert svg.count(ERROR_COLOURS["RetrievalError"]) == 2 + 1
    assert svg.count(ERROR_COLOURS["UpdateError"]) == 1 + 1


def test_a_case_with_no_time_is_counted(client: httpx.Client, project: str) -> None:
    # no answer unit and no attribution: the case has no time, and the report still answers
    case = {"id": "c", "question": "Where does Ann live?", "expected_answer": "Paris"}
    sent = client.post(
        "/traces", json={"project": project, "cases": [{**case, "verdict": "failed"}]}
    )
    assert sent.status_code == 200, sent.text
    for path in ("/report", "/report.html"):
        response = client.get(path, params={"project": project})
        assert response.status_code == 200, response.text
    assert get_report(client, project)["totals"]["failed"] == 1
