"""The audits paged by a cursor over the failed cases (deleted_then_needed, retrieval_misses):
paging with next_cursor through small windows and small scans finds every row of one big page
exactly once, in order, across pages that end inside a case; a skip, or a cursor that is not
one, of another audit or of other parameters, is a 422 saying what is wrong."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.audits.graphs import audit, case, op, post, unit
from tests.support.servers import Neo4jHandle, ServiceHandle, run_service

FACTS = ("the shelter on Saturdays", "green paint everywhere", "Porto by the river")


def misses(client: httpx.Client, project: str, questions: int) -> None:
    """Per question, a search that read three memories (one per fact) and returned none of
    them: a failed case with three retrieval misses (min_answer_coverage=0); every third case
    passed (no row), so windows of failed cases skip them."""
    memories = [
        op(f"op-ex{i}", "extraction", 1, [f"msg-{i}"], [unit(f"mem-{i}", "memory", f, f"e{i}")])
        for i, f in enumerate(FACTS)
    ]
    operations, cases = [*memories], []
    for n in range(questions):
        q, ctx, ans = f"q{n:02d}", f"ctx{n:02d}", f"ans{n:02d}"
        operations += [
            op(
                f"op-search{n:02d}",
                "retrieval",
                10,
                [unit(q, "query", f"question {n}?"), "mem-0", "mem-1", "mem-2"],
                [unit(ctx, "context", "nothing useful")],
            ),
            op(f"op-ans{n:02d}", "response", 11, [q, ctx], [unit(ans, "answer", "no idea")]),
        ]
        verdict = "passed" if n % 3 == 2 else "failed"
        cases.append(case(f"c{n:02d}", ans, "anything", ["msg-0", "msg-1", "msg-2"], verdict))
    post(
        client,
        project,
        units=[unit(f"msg-{i}", "message", f"user: {f}") for i, f in enumerate(FACTS)],
        operations=operations,
        cases=cases,
    )


def all_pages(client: httpx.Client, name: str, project: str, limit: int) -> list[list[Any]]:
    pages: list[list[Any]] = []
    cursor: str | None = None
    while True:
        params: dict[str, Any] = {"limit": limit, "min_answer_coverage": 0}
        page = audit(client, name, project, **params, **({"cursor": cursor} if cursor else {}))
        assert page["next_skip"] is None
        pages.append([(r["case"], r.get("memory") or r.get("memory_id")) for r in page["rows"]])
        cursor = page["next_cursor"]
        if cursor is None:
            return pages
        assert len(pages) < 200, "the cursor does not move on"


@pytest.fixture(scope="module")
def small_window_service(neo4j: Neo4jHandle, workdir: Path) -> Iterator[ServiceHandle]:
    """Pages of at most 4 failed cases and 5 candidates."""
    with run_service(
        neo4j.uri,
        workdir,
        MEMTRACE_NEO4J_USER=neo4j.user,
        MEMTRACE_NEO4J_PASSWORD=neo4j.password,
        MEMTRACE_AUDIT_CURSOR_CASES="4",
        MEMTRACE_AUDIT_CANDIDATE_SCAN="5",
    ) as handle:
        yield handle


def test_cursor_pages_find_every_row_once(
    client: httpx.Client, small_window_service: ServiceHandle, project: str
) -> None:
    misses(client, project, 15)
    whole = audit(client, "retrieval_misses", project, limit=1000, min_answer_coverage=0)
    expected = [(r["case"], r["memory"]) for r in whole["rows"]]
    assert len(expected) == 10 * 3 and whole["next_cursor"] is None
    with httpx.Client(base_url=small_window_service.url, timeout=60) as small:
        for limit in (1, 2, 7, 1000):
            pages = all_pages(small, "retrieval_misses", project, limit)
            assert [row for page in pages for row in page] == expected, limit
            assert all(len(page) <= limit for page in pages)
        # Five candidates a page, three a case: pages end inside a case and go on from there.
        first = audit(small, "retrieval_misses", project, limit=1000, min_answer_coverage=0)
        assert [r["case"] for r in first["rows"]] == ["c00"] * 3 + ["c01"] * 2
        second = audit(
            small,
            "retrieval_misses",
            project,
            limit=1000,
            min_answer_coverage=0,
            cursor=first["next_cursor"],
        )
        assert (second["rows"][0]["case"], second["rows"][0]["memory"]) == ("c01", "mem-2")


def test_a_cursor_paged_audit_of_an_empty_project(client: httpx.Client, project: str) -> None:
    for name in ("retrieval_misses", "deleted_then_needed"):
        page = audit(client, name, project)
        assert (page["rows"], page["next_cursor"], page["next_skip"]) == ([], None, None)


def _cursor(**fields: Any) -> str:
    return base64.urlsafe_b64encode(json.dumps(fields).encode()).decode()


@pytest.mark.parametrize(
    ("params", "says"),
    [
        ({"skip": 10**9}, "pages with a cursor, not skip"),
        ({"cursor": "%%% not base64"}, "not base64url-encoded JSON"),
        ({"cursor": _cursor(a=1)}, "not the fields of one"),
        (
            {"cursor": _cursor(audit="retrieval_misses", params={}, case=3, skip=0)},
            "its case must be a string",
        ),
        (
            {
                "cursor": _cursor(
                    audit="deleted_then_needed",
                    params={"min_answer_coverage": 100},
                    case="c1",
                    skip=0,
                )
            },
            "it pages audit 'deleted_then_needed', not 'retrieval_misses'",
        ),
        (
            {
                "cursor": _cursor(
                    audit="retrieval_misses", params={"min_answer_coverage": 0}, case="c", skip=0
                )
            },
            "it was made with parameters",
        ),
    ],
)
def test_a_bad_cursor_or_a_skip_is_422_saying_why(
    client: httpx.Client, project: str, params: dict[str, Any], says: str
) -> None:
    response = client.get("/audits/retrieval_misses", params={"project": project, **params})
    assert response.status_code == 422, response.text
    assert says in response.json()["message"]


def test_an_audit_paged_by_skip_refuses_a_cursor(client: httpx.Client, project: str) -> None:
    response = client.get(
        "/audits/dangling_units", params={"project": project, "cursor": _cursor(a=1)}
    )
    assert response.status_code == 422
    assert "pages with skip" in response.json()["message"]
