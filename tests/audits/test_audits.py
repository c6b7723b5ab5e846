"""Audits: each run over HTTP on a small hand-made graph whose answer is known, rows exact."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from neo4j import Driver

from cypher import names, query
from service.audits.catalogue import AUDITS
from tests.audits.graphs import audit, case, op, post, rows, t, unit
from tests.support.cli import memtrace
from tests.support.servers import Neo4jHandle, ServiceHandle, client_of_service, run_service
from tests.support.traces import demo_batch


def question(
    n: int, minute: int, retrieval_inputs: list[Any] | None, context: str
) -> list[dict[str, Any]]:
    """A query, (a retrieval reading ``retrieval_inputs`` into a context,) and an answer op."""
    q = unit(f"q{n}", "query", f"question {n}?")
    answer = [unit(f"ans{n}", "answer", "wrong")]
    if retrieval_inputs is None:
        return [op(f"op-ans{n}", "response", minute + 1, [q], answer)]
    ctx = unit(f"ctx{n}", "context", context)
    return [
        op(f"op-search{n}", "retrieval", minute, [q, *retrieval_inputs], [ctx]),
        op(f"op-ans{n}", "response", minute + 1, [f"ctx{n}", f"q{n}"], answer),
    ]


# ---------------------------------------------------------------------------- the registry


def test_every_audit_file_has_an_entry_and_back() -> None:
    files = set(names("audits"))
    assert files == {spec.statement for spec in AUDITS.values()}
    assert files == {f"audits/{name}" for name in AUDITS}
    for spec in AUDITS.values():
        header = " ".join(line for line in query(spec.statement).splitlines() if line[:2] == "//")
        for param in ("project", "skip", "limit", *(p.name for p in spec.info.parameters)):
            assert param in header, f"{spec.statement} does not document {param}"


def test_list_audits(client: httpx.Client) -> None:
    listed = client.get("/audits").json()
    assert [a["name"] for a in listed] == sorted(AUDITS)
    by_name = {a["name"]: a for a in listed}
    assert by_name["degraded_updates"]["parameters"] == [
        {
            "name": "min_lost_words",
            "type": "int",
            "default": 1,
            "description": by_name["degraded_updates"]["parameters"][0]["description"],
            "minimum": 1,
            "maximum": 1_000_000,
            "choices": None,
        }
    ]
    assert [c["name"] for c in by_name["idle_operations"]["columns"]] == [
        "operation",
        "name",
        "kind",
        "session",
        "ts",
        "missing",
    ]
    assert "retrieval" in by_name["idle_operations"]["parameters"][0]["choices"]
    assert all(a["description"] and a["columns"] for a in listed)


def test_units_store_their_memory_entry(
    client: httpx.Client, project: str, neo4j_driver: Driver
) -> None:
    post(
        client,
        project,
        units=[
            unit("a", "memory", "x", entry="m-1"),
            unit("b", "memory", "y", entry_id=7),
            unit("c", "memory", "z"),
        ],
        operations=[op("o", "update", 1, ["a", "later"], [])],
    )
    post(client, project, units=[unit("later", "memory", "w", entry="m-2")])
    records, _, _ = neo4j_driver.execute_query(
        "MATCH (u:Unit {project: $p}) RETURN u.id AS id, u.memory_id AS m ORDER BY id", p=project
    )
    assert [(r["id"], r["m"]) for r in records] == [
        ("a", "m-1"),
        ("b", "7"),
        ("c", None),
        ("later", "m-2"),
    ]


# ---------------------------------------------------------------------------- the audits


def test_construction_loss(client: httpx.Client, project: str) -> None:
    post(
        client,
        project,
        units=[
            unit("msg-kept", "message", "Alice: I am a nurse"),
            unit("msg-deep", "message", "Alice: I live in Porto"),
            unit("msg-lost", "message", "Alice: I am allergic to peanuts"),
            unit("msg-side", "message", "Alice: I like jazz"),
            unit("msg-tomb", "message", "Alice: forget my old job"),
            unit("msg-unread", "message", "Alice: my sister is Emma"),
            unit("query-unread", "query", "where?"),
        ],
        operations=[
            op("op-kept", "extraction", 1, ["msg-kept"], [unit("fact", "memory", "nurse")]),
            # Reaches a memory two operation steps later: not lost.
            op("op-note", "other", 2, ["msg-deep"], [unit("note", "other", "Porto")]),
            op("op-store", "update", 3, ["note"], [unit("mem-home", "memory", "Lives in Porto")]),
            op("op-empty", "extraction", 4, ["msg-lost"], [], session_id="s-lost"),
            op("op-side", "extraction", 5, ["msg-side"], [unit("scratch", "other", "jazz?")]),
            op("op-forget", "deletion", 6, ["msg-tomb"], [unit("stone", "tombstone", "")]),
        ],
    )
    found = rows(client, "construction_loss", project, preview=11)
    assert found == [
        {
            "message": "msg-lost",
            "preview": "Alice: I am",
            "ts": None,
            "consumed_by": ["op-empty"],
            "produced_nothing": ["op-empty"],
            "session": "s-lost",
        },
        {
            "message": "msg-side",
            "preview": "Alice: I li",
            "ts": None,
            "consumed_by": ["op-side"],
            "produced_nothing": [],
            "session": "s1",
        },
        {
            "message": "msg-tomb",
            "preview": "Alice: forg",
            "ts": None,
            "consumed_by": ["op-forget"],
            "produced_nothing": [],
            "session": "s1",
        },
        {
            "message": "msg-unread",
            "preview": "Alice: my s",
            "ts": None,
            "consumed_by": [],
            "produced_nothing": [],
            "session": None,
        },
    ]


def lost(client: httpx.Client, project: str) -> list[str]:
    return [row["message"] for row in rows(client, "construction_loss", project)]


def test_construction_loss_follows_later_batches(client: httpx.Client, project: str) -> None:
    """The writer's reach marks (what makes the audit an index seek) change as batches arrive:
    a message is no longer lost once a later batch carries its content into a memory, however
    many operations away, or defines as a memory a unit it was read into by id."""
    post(
        client,
        project,
        units=[unit(f"msg-{n}", "message", f"Alice: fact {n}") for n in range(4)],
        operations=[
            op("op-note", "other", 1, ["msg-0"], [unit("note", "other", "fact 0")]),
            op("op-ref", "extraction", 2, ["msg-1"], ["later"]),
            op("op-chain-0", "other", 3, ["msg-2"], [unit("link-0", "other", "fact 2")]),
        ],
    )
    assert lost(client, project) == ["msg-0", "msg-1", "msg-2", "msg-3"]
    # A chain of 12 more operations to a memory: deeper than the walk the audit used to bound.
    chain = [
        op(f"op-chain-{n}", "other", 3 + n, [f"link-{n - 1}"], [unit(f"link-{n}", "other", "x")])
        for n in range(1, 12)
    ]
    last = op("op-chain-end", "update", 20, ["link-11"], [unit("mem-2", "memory", "fact 2")])
    post(
        client,
        project,
        units=[unit("later", "memory", "fact 1")],
        operations=[
            op("op-store", "update", 4, ["note"], [unit("mem-0", "memory", "fact 0")]),
            *chain,
            last,
        ],
    )
    assert lost(client, project) == ["msg-3"]


def test_construction_loss_after_a_deletion(client: httpx.Client, project: str) -> None:
    """Deleting the operations that carried a message to a memory makes it lost again; a message
    with another way to a memory stays reached."""
    post(
        client,
        project,
        units=[unit("msg-a", "message", "Alice: a"), unit("msg-b", "message", "Alice: b")],
        operations=[
            op("op-note", "other", 1, ["msg-a", "msg-b"], [unit("note", "other", "a b")]),
            op("op-keep", "extraction", 2, ["msg-b"], [unit("mem-b", "memory", "b")]),
            op("op-store", "update", 3, ["note"], [unit("mem-a", "memory", "a")], session_id="s2"),
        ],
    )
    assert lost(client, project) == []
    response = client.delete("/sessions/s2", params={"project": project})
    assert response.status_code == 200, response.text
    assert response.json()["operations"] == 1
    assert lost(client, project) == ["msg-a"]


MARKS = """
MATCH (n {project: $p}) WHERE n:Unit OR n:Operation
RETURN n.id AS id, coalesce(n.reaches_memory, n.rewrites_memory) AS mark ORDER BY id
"""


def test_graphs_stored_before_the_marks_are_marked_at_start_up(
    client: httpx.Client, project: str, neo4j: Neo4jHandle, neo4j_driver: Driver, tmp_path: Path
) -> None:
    """A store written by an earlier version has units without reaches_memory and operations
    without rewrites_memory: the next service start sets both (cypher/migrations) and the audits
    that seek on them find the same rows."""
    post(
        client,
        project,
        units=[
            unit("msg-kept", "message", "Alice: kept"),
            unit("msg-lost", "message", "x"),
            unit("v1", "memory", "Alice has a red car", entry="e"),
        ],
        operations=[
            op("op-x", "extraction", 1, ["msg-kept"], [unit("fact", "other", "kept")]),
            op("op-y", "update", 2, ["fact"], [unit("mem", "memory", "kept")]),
            op("op-z", "update", 3, ["v1"], [unit("v2", "memory", "Alice has a car", entry="e")]),
        ],
    )
    before = neo4j_driver.execute_query(MARKS, p=project).records
    assert [(r["id"], r["mark"]) for r in before] == [
        ("fact", True),
        ("mem", True),
        ("msg-kept", True),
        ("msg-lost", False),
        ("op-x", False),
        ("op-y", False),
        ("op-z", True),
        ("v1", True),
        ("v2", True),
    ]
    neo4j_driver.execute_query(
        "MATCH (n {project: $p}) REMOVE n.reaches_memory, n.rewrites_memory", p=project
    )
    # Nodes without marks are invisible to the index seeks.
    assert lost(client, project) == []
    assert rows(client, "degraded_updates", project) == []
    with client_of_service(neo4j, tmp_path) as fresh:
        assert lost(fresh, project) == ["msg-lost"]
        degraded = rows(fresh, "degraded_updates", project)
        assert [(r["operation"], r["lost_words"]) for r in degraded] == [("op-z", ["red"])]
    assert neo4j_driver.execute_query(MARKS, p=project).records == before


def _deletion_graph(client: httpx.Client, project: str) -> None:
    pets = "Alice adopted a dog named Biscuit and a cat named Tom"
    post(
        client,
        project,
        units=[
            unit("msg-pets", "message", pets),
            unit("msg-jazz", "message", "Alice likes jazz"),
            unit("msg-home", "message", "Alice lives in Lisbon"),
        ],
        operations=[
            op(
                "op-extract",
                "extraction",
                1,
                ["msg-pets"],
                [
                    unit("mem-dog@1", "memory", "Dog named Biscuit", "mem-dog"),
                    unit("mem-cat@1", "memory", "Cat named Tom", "mem-cat"),
                ],
            ),
            op(
                "op-extract-jazz",
                "extraction",
                1,
                ["msg-jazz"],
                [unit("mem-jazz@1", "memory", "Likes jazz", "mem-jazz")],
            ),
            op(
                "op-extract-home",
                "extraction",
                1,
                ["msg-home"],
                [unit("mem-home@1", "memory", "Lives in Lisbon", "mem-home")],
            ),
            # An update that tombstones the dog, a deletion (no output) of the cat ...
            op(
                "op-forget",
                "update",
                3,
                ["mem-dog@1"],
                [unit("mem-dog@x", "tombstone", "DELETED", "mem-dog")],
            ),
            op("op-drop", "deletion", 4, ["mem-cat@1"], []),
            # ... a deletion nobody needed, and one after the questions were answered.
            op("op-drop-jazz", "deletion", 4, ["mem-jazz@1"], []),
            op("op-drop-home", "deletion", 30, ["mem-home@1"], []),
            *question(1, 10, None, ""),
            *question(2, 12, None, ""),
            *question(3, 14, None, ""),
            *question(4, 16, None, ""),
            *question(5, 18, None, ""),
        ],
        cases=[
            case("c-dog", "ans1", "Biscuit", ["msg-pets"]),
            case("c-cat", "ans5", "Tom", ["msg-pets"]),
            case("c-pets", "ans1", "Biscuit and Tom", ["msg-pets"]),  # half in each memory
            case("c-home", "ans2", "Lisbon", ["msg-home"]),  # deleted after its answer
            case("c-passed", "ans3", "Biscuit", ["msg-pets"], verdict="passed"),
            case("c-fish", "ans4", "Alice has no fish", ["msg-pets"]),  # needs neither pet
        ],
    )


def test_deleted_then_needed(client: httpx.Client, project: str) -> None:
    _deletion_graph(client, project)
    found = rows(client, "deleted_then_needed", project)
    assert found == [
        {
            "case": "c-cat",
            "memory_id": "mem-cat",
            "versions": ["mem-cat@1"],
            "deleted_version": "mem-cat@1",
            "deletion": "op-drop",
            "deletion_kind": "deletion",
            "deleted_at": t(4),
            "answered_at": t(19),
            "evidence": ["msg-pets"],
            "answer_words": ["tom"],
        },
        {
            "case": "c-dog",
            "memory_id": "mem-dog",
            "versions": ["mem-dog@1"],
            "deleted_version": "mem-dog@1",
            "deletion": "op-forget",
            "deletion_kind": "update",
            "deleted_at": t(3),
            "answered_at": t(11),
            "evidence": ["msg-pets"],
            "answer_words": ["biscuit"],
        },
    ]
    # Half the answer's words in one memory: enough at 50 percent.
    half = rows(client, "deleted_then_needed", project, min_answer_coverage=50)
    assert [(r["case"], r["memory_id"], r["answer_words"]) for r in half] == [
        ("c-cat", "mem-cat", ["tom"]),
        ("c-dog", "mem-dog", ["biscuit"]),
        ("c-pets", "mem-cat", ["tom"]),
        ("c-pets", "mem-dog", ["biscuit"]),
    ]
    # With no answer rule the structure alone blames every failed case on both deletions.
    loose = rows(client, "deleted_then_needed", project, min_answer_coverage=0)
    assert [(r["case"], r["memory_id"]) for r in loose] == [
        (c, m) for c in ("c-cat", "c-dog", "c-fish", "c-pets") for m in ("mem-cat", "mem-dog")
    ]


def test_deleted_then_needed_on_the_demo(client: httpx.Client, project: str) -> None:
    assert client.post("/traces", json=demo_batch(project)).status_code == 200
    found = rows(client, "deleted_then_needed", project)
    assert [(r["case"], r["memory_id"], r["deletion"]) for r in found] == [
        ("case-3", "mem-dog", "op-update-2")
    ]
    degraded = rows(client, "degraded_updates", project)
    assert [(r["old_version"], r["new_version"]) for r in degraded] == [("mem-job@1", "mem-job@2")]


def test_retrieval_misses(client: httpx.Client, project: str) -> None:
    shelter = "Volunteers at the animal shelter on Saturdays"
    colour = "Favourite colour is green"
    post(
        client,
        project,
        units=[
            unit("msg-1", "message", "Alice volunteers at the animal shelter on Saturdays"),
            unit("msg-2", "message", "Alice's favourite colour is green"),
            unit("msg-3", "message", "Alice lives in Porto"),
            unit("msg-4", "message", "Alice's brother is Tom"),
        ],
        operations=[
            op(
                "op-ex1",
                "extraction",
                1,
                ["msg-1"],
                [unit("mem-shelter@1", "memory", shelter, "mem-shelter")],
            ),
            op(
                "op-ex2",
                "extraction",
                1,
                ["msg-2"],
                [unit("mem-colour@1", "memory", colour, "mem-colour")],
            ),
            op(
                "op-ex3",
                "extraction",
                1,
                ["msg-3"],
                [unit("mem-home@1", "memory", "Lives in Porto", "mem-home")],
            ),
            op(
                "op-up",
                "update",
                2,
                ["mem-home@1"],
                [unit("mem-home@2", "memory", "Lives in Lisbon", "mem-home")],
            ),
            # The search read the shelter memory as a candidate and returned something else.
            *question(1, 10, ["mem-shelter@1", "mem-colour@1"], colour),
            # Retrieved and in the context: the answer's fault, not the retrieval's.
            *question(2, 12, ["mem-colour@1"], colour),
            # The old version was superseded before the question; the live one says Lisbon.
            *question(3, 14, [], "nothing"),
            # The brother's memory is made after the question.
            op(
                "op-ex4",
                "extraction",
                40,
                ["msg-4"],
                [unit("mem-bro@1", "memory", "Brother is Tom", "mem-bro")],
            ),
            *question(4, 16, [], "nothing"),
            # No retrieval at all on the answer's lineage.
            *question(5, 18, None, ""),
            # Retrieved, and the returned text holds it verbatim.
            *question(6, 20, ["mem-shelter@1"], f"- {colour}\n- {shelter}"),
            # Retrieved and paraphrased: the context carries the answer, a response fault.
            *question(7, 22, ["mem-shelter@1"], "Alice helps at an animal shelter"),
        ],
        cases=[
            case("c-miss", "ans1", "She volunteers at the animal shelter", ["msg-1"]),
            case("c-hit", "ans2", "green", ["msg-2"]),
            case("c-old", "ans3", "Porto", ["msg-3"]),
            case("c-late", "ans4", "Tom", ["msg-4"]),
            case("c-noret", "ans5", "the animal shelter", ["msg-1"]),
            case("c-ret", "ans6", "the animal shelter", ["msg-1"]),
            case("c-resp", "ans7", "the animal shelter", ["msg-1"]),
            case("c-passed", "ans1", "the animal shelter", ["msg-1"], verdict="passed"),
        ],
    )
    found = rows(client, "retrieval_misses", project)
    assert found == [
        {
            "case": "c-miss",
            "memory": "mem-shelter@1",
            "memory_id": "mem-shelter",
            "produced_at": t(1),
            "answered_at": t(11),
            "evidence": ["msg-1"],
            "retrievals": ["op-search1"],
            "read_by": ["op-search1"],
            "answer_words": ["volunteers", "animal", "shelter"],
        }
    ]
    # With no answer rule: the live Lisbon memory for the Porto question, and the paraphrase.
    loose = rows(client, "retrieval_misses", project, min_answer_coverage=0)
    assert [(r["case"], r["memory"], r["read_by"]) for r in loose] == [
        ("c-miss", "mem-shelter@1", ["op-search1"]),
        ("c-old", "mem-home@2", []),
        ("c-resp", "mem-shelter@1", ["op-search7"]),
    ]


def test_dangling_units(client: httpx.Client, project: str) -> None:
    post(
        client,
        project,
        units=[unit("msg", "message", "hello")],
        operations=[
            op("op-a", "extraction", 1, ["msg", "ghost-in", "later"], ["ghost-out"]),
            op("op-b", "retrieval", 2, ["ghost-in"], [unit("ans", "answer", "x")]),
        ],
        cases=[case("c1", "ans", "x", ["ghost-evidence", "msg"])],
    )
    post(client, project, units=[unit("later", "message", "defined in a later batch")])
    assert rows(client, "dangling_units", project) == [
        {"unit": "ghost-evidence", "consumed_by": [], "produced_by": [], "cases": ["c1"]},
        {"unit": "ghost-in", "consumed_by": ["op-a", "op-b"], "produced_by": [], "cases": []},
        {"unit": "ghost-out", "consumed_by": [], "produced_by": ["op-a"], "cases": []},
    ]


def test_idle_operations(client: httpx.Client, project: str) -> None:
    post(
        client,
        project,
        units=[unit("u1", "message", "a")],
        operations=[
            op("op-full", "extraction", 1, ["u1"], [unit("u2", "memory", "b")]),
            op("op-none", "other", 2, [], []),
            op("op-no-out", "extraction", 3, ["u1"], []),
            op("op-no-in", "retrieval", 4, [], [unit("u3", "context", "c")]),
        ],
    )
    found = rows(client, "idle_operations", project)
    assert [(r["operation"], r["kind"], r["missing"], r["ts"]) for r in found] == [
        ("op-none", "other", "inputs and outputs", t(2)),
        ("op-no-out", "extraction", "outputs", t(3)),
        ("op-no-in", "retrieval", "inputs", t(4)),
    ]
    assert found[0] == {
        "operation": "op-none",
        "name": "step.other",
        "kind": "other",
        "session": "s1",
        "ts": t(2),
        "missing": "inputs and outputs",
    }
    only = rows(client, "idle_operations", project, kind="extraction")
    assert [r["operation"] for r in only] == ["op-no-out"]


def test_idle_operations_stored_before_the_mark_are_marked_at_start_up(
    client: httpx.Client, project: str, neo4j: Neo4jHandle, neo4j_driver: Driver, tmp_path: Path
) -> None:
    """The audit seeks the writer's idle mark: operations an earlier version stored without it
    are invisible to it until the next service start marks them (cypher/migrations)."""
    post(
        client,
        project,
        units=[unit("u1", "message", "a")],
        operations=[
            op("op-full", "extraction", 1, ["u1"], [unit("u2", "memory", "b")]),
            op("op-no-out", "extraction", 2, ["u1"], []),
            op("op-none", "other", 3, [], []),
        ],
    )
    marks = "MATCH (o:Operation {project: $p}) RETURN o.id AS id, o.idle AS idle ORDER BY id"
    before = [tuple(r.values()) for r in neo4j_driver.execute_query(marks, p=project).records]
    assert before == [("op-full", None), ("op-no-out", True), ("op-none", True)]
    neo4j_driver.execute_query("MATCH (o:Operation {project: $p}) REMOVE o.idle", p=project)
    assert rows(client, "idle_operations", project) == []
    with client_of_service(neo4j, tmp_path) as fresh:
        found = rows(fresh, "idle_operations", project)
        assert [r["operation"] for r in found] == ["op-no-out", "op-none"]
    after = [tuple(r.values()) for r in neo4j_driver.execute_query(marks, p=project).records]
    assert after == before


# ---------------------------------------------------------------------------- paging, errors


def test_pagination(client: httpx.Client, project: str) -> None:
    post(
        client,
        project,
        operations=[op(f"op-{i}", "other", i, [f"ghost-{i}"], []) for i in range(5)],
    )
    pages, skip = [], 0
    while skip is not None:
        page = audit(client, "dangling_units", project, skip=skip, limit=2)
        pages.append([r["unit"] for r in page["rows"]])
        skip = page["next_skip"]
    assert pages == [["ghost-0", "ghost-1"], ["ghost-2", "ghost-3"], ["ghost-4"]]
    last = audit(client, "idle_operations", project, skip=4, limit=1)
    assert [r["operation"] for r in last["rows"]] == ["op-4"]
    assert last["next_skip"] is None
    assert audit(client, "idle_operations", project, skip=9)["rows"] == []


def _lossy_updates(client: httpx.Client, project: str, n: int, lossy: set[int]) -> None:
    """``n`` updates of one-version entries; those in ``lossy`` drop the word "lost". The others
    reorder the words, so that they stay candidates the service reads and drops (a version
    holding the old content verbatim is dropped by the statement itself)."""
    ops = [
        op(
            f"op-{i:04d}",
            "update",
            1,
            [unit(f"v{i:04d}@1", "memory", "kept words lost", f"e{i}")],
            [
                unit(
                    f"v{i:04d}@2",
                    "memory",
                    "kept words" if i in lossy else "lost kept words",
                    f"e{i}",
                )
            ],
        )
        for i in range(n)
    ]
    post(client, project, operations=ops)


def _all_pages(client: httpx.Client, name: str, project: str, limit: int) -> list[list[str]]:
    pages: list[list[str]] = []
    skip: int | None = 0
    while skip is not None:
        page = audit(client, name, project, skip=skip, limit=limit)
        pages.append([r["operation"] for r in page["rows"]])
        skip = page["next_skip"]
    return pages


def test_pagination_of_a_filtered_audit(client: httpx.Client, project: str) -> None:
    """degraded_updates keeps the candidates that lost words: next_skip counts candidates, and
    the pages hold every kept row once, full but for the last."""
    lossy = {3, 4, 5, 40, 41, 77}
    _lossy_updates(client, project, 80, lossy)
    pages = _all_pages(client, "degraded_updates", project, limit=4)
    assert pages == [["op-0003", "op-0004", "op-0005", "op-0040"], ["op-0041", "op-0077"]]
    second = audit(client, "degraded_updates", project, skip=0, limit=4)
    assert second["next_skip"] == 41  # the candidate op-0041 is where the next page starts


@pytest.fixture(scope="module")
def small_scan_service(neo4j: Neo4jHandle, workdir: Path) -> Iterator[ServiceHandle]:
    """The service reading at most 50 candidates per page of a filtered audit."""
    with run_service(
        neo4j.uri,
        workdir,
        MEMTRACE_NEO4J_USER=neo4j.user,
        MEMTRACE_NEO4J_PASSWORD=neo4j.password,
        MEMTRACE_AUDIT_CANDIDATE_SCAN="50",
    ) as handle:
        yield handle


def test_candidate_scan_bounds_a_page(small_scan_service: ServiceHandle, project: str) -> None:
    """A page stops after MEMTRACE_AUDIT_CANDIDATE_SCAN candidates, short but with next_skip;
    paging on still finds every row once, across the scan boundaries."""
    lossy = {5, 48, 49, 50, 51, 130}
    with httpx.Client(base_url=small_scan_service.url, timeout=60) as client:
        _lossy_updates(client, project, 160, lossy)
        first = audit(client, "degraded_updates", project, limit=10)
        assert [r["operation"] for r in first["rows"]] == ["op-0005", "op-0048", "op-0049"]
        assert first["next_skip"] == 50
        pages = _all_pages(client, "degraded_updates", project, limit=2)
    assert [o for page in pages for o in page] == [f"op-{i:04d}" for i in sorted(lossy)]
    assert [] in pages  # candidates 100-149 hold none: an empty page that still goes on


def test_unknown_audit_is_404_naming_the_known_ones(client: httpx.Client, project: str) -> None:
    response = client.get("/audits/no_such_audit", params={"project": project})
    assert response.status_code == 404
    body = response.json()
    assert body["error"] == "not_found"
    assert "no_such_audit" in body["message"]
    assert body["details"] == [
        {"loc": ["path", "name"], "msg": "no such audit", "known": sorted(AUDITS)}
    ]
    assert all(name in body["message"] for name in AUDITS)


@pytest.mark.parametrize(
    ("name", "params", "bad"),
    [
        ("degraded_updates", {"min_lost_words": "many"}, "min_lost_words"),
        ("degraded_updates", {"min_lost_words": "0"}, "min_lost_words"),
        ("idle_operations", {"kind": "teleport"}, "kind"),
        ("dangling_units", {"min_lost_words": "2"}, "min_lost_words"),
        ("construction_loss", {"preview": "-1"}, "preview"),
        ("construction_loss", {"limit": "0"}, "limit"),
        ("construction_loss", {"skip": "x"}, "skip"),
    ],
)
def test_bad_parameter_is_422_naming_it(
    client: httpx.Client, project: str, name: str, params: dict[str, str], bad: str
) -> None:
    response = client.get(f"/audits/{name}", params={"project": project, **params})
    assert response.status_code == 422
    body = response.json()
    assert body["error"] == "invalid_input"
    assert [d["loc"] for d in body["details"]] == [["query", bad]]


def test_repeated_parameter_is_422(client: httpx.Client, project: str) -> None:
    params = [("project", project), ("min_lost_words", "1"), ("min_lost_words", "2")]
    response = client.get("/audits/degraded_updates", params=params)
    assert response.status_code == 422
    assert response.json()["details"][0]["msg"] == "given more than once"


# The first of these in a row names it; the other project holds one more row of OTHER_EXTRA.
KEY_COLUMNS = ("message", "new_version", "case", "memory", "unit", "operation")
OTHER_EXTRA = {"construction_loss", "dangling_units", "idle_operations"}


def test_project_isolation(client: httpx.Client, project: str) -> None:
    """Two projects holding the same ids, one with more findings: each sees only its own."""
    other, empty = f"{project}-other", f"{project}-empty"
    for name in (project, other):
        assert client.post("/traces", json=demo_batch(name)).status_code == 200
    post(
        client,
        other,
        units=[unit("msg-lonely", "message", "never read")],
        operations=[op("op-idle", "other", 1, ["ghost"], [])],
    )
    expected = {
        "construction_loss": [],
        "degraded_updates": ["mem-job@2"],
        "deleted_then_needed": ["case-3"],
        "retrieval_misses": ["case-4"],  # case-3's memory was deleted: not a miss
        "dangling_units": [],
        "idle_operations": [],
    }
    assert set(expected) == set(AUDITS)
    for name, ids in expected.items():
        found = rows(client, name, project)
        assert [next(v for k, v in r.items() if k in KEY_COLUMNS) for r in found] == ids, name
        assert len(rows(client, name, other)) == len(ids) + (name in OTHER_EXTRA), name
        assert rows(client, name, empty) == [], name


# ---------------------------------------------------------------------------- the CLI


def test_cli_audit_table_and_json(service: ServiceHandle, project: str) -> None:
    with httpx.Client(base_url=service.url, timeout=60) as client:
        _deletion_graph(client, project)
    listed = memtrace("audit", "--url", service.url)
    assert listed.returncode == 0, listed.stderr
    for name in AUDITS:
        assert name in listed.stdout
    assert "min_lost_words" in listed.stdout
    as_json = memtrace("audit", "--list", "--json", "--url", service.url)
    assert [a["name"] for a in json.loads(as_json.stdout)] == sorted(AUDITS)

    table = memtrace("audit", "deleted_then_needed", "--project", project, "--url", service.url)
    assert table.returncode == 0, table.stderr
    assert "2 row(s)" in table.stdout
    row = next(line for line in table.stdout.splitlines() if "op-forget" in line)
    assert "c-dog" in row and "mem-dog" in row and "biscuit" in row

    page = memtrace(
        "audit",
        "deleted_then_needed",
        "--project",
        project,
        "--param",
        "min_answer_coverage=0",
        "--limit",
        "3",
        "--json",
        "--url",
        service.url,
    )
    assert page.returncode == 0, page.stderr
    result = json.loads(page.stdout)
    assert [(r["case"], r["memory_id"]) for r in result["rows"]] == [
        ("c-cat", "mem-cat"),
        ("c-cat", "mem-dog"),
        ("c-dog", "mem-cat"),
    ]
    # deleted_then_needed pages with a cursor (next_skip is always null), --cursor goes on.
    assert result["next_skip"] is None and result["next_cursor"]
    assert result["parameters"] == {"min_answer_coverage": 0}
    following = memtrace(
        "audit",
        "deleted_then_needed",
        "--project",
        project,
        "--param",
        "min_answer_coverage=0",
        "--cursor",
        result["next_cursor"],
        "--json",
        "--url",
        service.url,
    )
    assert following.returncode == 0, following.stderr
    rest = [(r["case"], r["memory_id"]) for r in json.loads(following.stdout)["rows"]]
    assert rest and rest[0] == ("c-dog", "mem-dog")


def test_cli_audit_errors(service: ServiceHandle, down_service: ServiceHandle) -> None:
    unknown = memtrace("audit", "nope", "--url", service.url)
    assert unknown.returncode == 2
    assert "HTTP 404" in unknown.stderr and "construction_loss" in unknown.stderr
    bad = memtrace("audit", "idle_operations", "-p", "kind=teleport", "--url", service.url)
    assert bad.returncode == 2
    assert "query.kind: must be one of" in bad.stderr
    malformed = memtrace("audit", "idle_operations", "--param", "kind", "--url", service.url)
    assert malformed.returncode == 2
    assert "NAME=VALUE" in malformed.stderr
    down = memtrace("audit", "dangling_units", "--url", down_service.url)
    assert down.returncode == 1
    assert "HTTP 503" in down.stderr
    nobody = memtrace("audit", "--url", "http://127.0.0.1:9")
    assert nobody.returncode == 1
    assert "cannot reach the service" in nobody.stderr
