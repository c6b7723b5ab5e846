"""The degraded_updates audit and the rewrite flag it walks (``rewrites_memory``, set by
ingest/marks.py and cypher/ingest/mark_rewrites): the same pairs flagged in a batch and in the
store, versions defined later, and reads in proportion to an entry's versions."""

from __future__ import annotations

from typing import Any

import httpx
from neo4j import Driver

from cypher import query
from tests.audits.graphs import audit, op, post, rows, unit


def _span(text: str, start: str, end: str) -> str:
    """``text`` from ``start`` to the first ``end`` after it, whitespace collapsed."""
    begin = text.index(start)
    return " ".join(text[begin : text.index(end, begin) + len(end)].split())


def test_the_rewrite_flag_and_its_audit_test_the_same_pairs() -> None:
    """degraded_updates walks only the operations mark_rewrites flagged: both statements must
    find version pairs and pre-filter them alike (ingest/marks.py follows them; a test below
    holds it to the same flags)."""
    audit, mark = query("audits/degraded_updates"), query("ingest/mark_rewrites")
    pairs = ("// The memories the operation read", "| r.unit] AS old")
    verbatim = ("old.content = ''", "false)")
    assert _span(audit, *pairs) == _span(mark, *pairs)
    assert _span(audit, *verbatim) == _span(mark, *verbatim)


# (old, new) contents: edges of the verbatim pre-filter (word boundaries, repeats, ends, case,
# non-ASCII punctuation, empty content).
VERSION_PAIRS = [
    ("the cat sat", "the cat sat. And more"),
    ("cat", "concatenated"),
    ("Kept Words", "kept words"),
    ("x Lost y", "x y"),
    ("old words", "new words and old words_"),
    ("ab", "abab"),
    ("ab", "xab"),
    ("ab", "ab"),
    ("ab", "ab\tc"),
    ("", "anything"),
    ("café", "café au lait"),
    ("a b", "a b€"),
    ("€ x", "y € x"),
    ("x", "«x»"),
]


def _rewrite_ops(stored_olds: bool) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(units sent first, operations): each pair as an entry's update (memory_id) and as a
    buffer's (no memory_id: an update with one output), plus an update with two outputs."""
    olds, ops = [], []
    for n, (old, new) in enumerate(VERSION_PAIRS):
        for rule, entry in (("entry", f"e{n}"), ("buffer", None)):
            olds.append(unit(f"{rule}{n}@1", "memory", old, entry))
            ops.append(
                op(
                    f"op-{rule}{n}",
                    "update",
                    n,
                    [f"{rule}{n}@1"],
                    [unit(f"{rule}{n}@2", "memory", new, entry)],
                )
            )
        olds.append(unit(f"two{n}@1", "memory", old))
        ops.append(
            op(
                f"op-two{n}",
                "update",
                n,
                [f"two{n}@1"],
                [unit(f"two{n}@2", "memory", new), unit(f"two{n}@3", "memory", "")],
            )
        )
    if not stored_olds:
        return [], [{**o, "inputs": [u for u in olds if u["id"] == o["inputs"][0]]} for o in ops]
    return olds, ops


def test_the_batch_and_the_store_flag_rewrites_alike(
    client: httpx.Client, project: str, neo4j_driver: Driver
) -> None:
    """The writer decides rewrites_memory in Python when a batch holds both versions
    (ingest/marks.py) and in Cypher when one is stored (mark_rewrites.cypher): the same pairs
    get the same flags either way, and the audit the same rows."""
    _, in_batch = _rewrite_ops(stored_olds=False)
    post(client, project, operations=in_batch)
    olds, later = _rewrite_ops(stored_olds=True)
    post(client, f"{project}-store", units=olds)
    post(client, f"{project}-store", operations=later)
    flags = {}
    for name in (project, f"{project}-store"):
        flags[name] = {
            r["id"]: r["f"]
            for r in neo4j_driver.execute_query(
                "MATCH (o:Operation {project: $p}) RETURN o.id AS id, o.rewrites_memory AS f",
                p=name,
            ).records
        }
    assert flags[project] == flags[f"{project}-store"]
    assert len(flags[project]) == 3 * len(VERSION_PAIRS)
    assert {k for k, v in flags[project].items() if v} == {
        f"op-{rule}{n}" for n in (1, 2, 3, 6, 11, 13) for rule in ("entry", "buffer")
    }
    for name in (project, f"{project}-store"):
        found = rows(client, "degraded_updates", name)
        assert [(r["operation"], r["lost_words"]) for r in found] == [
            ("op-buffer1", ["cat"]),
            ("op-entry1", ["cat"]),
            ("op-buffer3", ["lost"]),
            ("op-entry3", ["lost"]),
            ("op-buffer6", ["ab"]),
            ("op-entry6", ["ab"]),
        ]


def test_degraded_updates_follows_versions_defined_later(
    client: httpx.Client, project: str, neo4j_driver: Driver
) -> None:
    """An update that named its versions by id is flagged again when a later batch defines
    them: reported once the new version turns out to lose words, not when it keeps them."""
    post(
        client,
        project,
        operations=[
            op("op-lossy", "update", 1, ["a@1"], ["a@2"]),
            op("op-kept", "update", 2, ["b@1"], ["b@2"]),
        ],
    )
    assert rows(client, "degraded_updates", project) == []  # versions of no kind yet
    post(
        client,
        project,
        units=[
            unit("a@1", "memory", "Alice lives in Porto", entry="a"),
            unit("a@2", "memory", "Alice lives", entry="a"),
            unit("b@1", "memory", "Bob cooks", entry="b"),
            unit("b@2", "memory", "Bob cooks, and bakes", entry="b"),
        ],
    )
    found = rows(client, "degraded_updates", project)
    assert [(r["operation"], r["lost_words"]) for r in found] == [("op-lossy", ["porto"])]
    flags = neo4j_driver.execute_query(
        "MATCH (o:Operation {project: $p}) RETURN o.id AS id, o.rewrites_memory AS f ORDER BY id",
        p=project,
    ).records
    assert [(r["id"], r["f"]) for r in flags] == [("op-kept", False), ("op-lossy", True)]


def test_degraded_updates(client: httpx.Client, project: str) -> None:
    nurse = "Alice works as a nurse at St. Mary's hospital"
    post(
        client,
        project,
        units=[
            unit("m1@1", "memory", nurse, entry="m1"),
            unit("m2@1", "memory", "Bob owns a red bicycle and a green car", entry="m2"),
            unit("m4@1", "memory", "Dan speaks French and German", entry_id="m4"),
            unit("m5@1", "memory", "Eve has a cat", entry="m5"),
        ],
        operations=[
            # Kept everything (and added Denver): not reported.
            op(
                "op-u1", "update", 1, ["m1@1"], [unit("m1@2", "memory", f"{nurse} in Denver", "m1")]
            ),
            op(
                "op-u2",
                "update",
                2,
                ["m2@1"],
                [unit("m2@2", "memory", "Bob owns a red bicycle", "m2")],
            ),
            # The entry named by entry_id instead of memory_id.
            op(
                "op-u4",
                "update",
                3,
                ["m4@1"],
                [unit("m4@2", "memory", "Dan speaks French", entry_id="m4")],
            ),
            # A deletion is no degraded update; nor is a new version of another entry.
            op("op-del", "deletion", 4, ["m5@1"], [unit("m5@x", "tombstone", "", "m5")]),
            op("op-other", "update", 5, ["m2@2"], [unit("m6@1", "memory", "Frank", "m6")]),
            # A buffer without memory_id, rewritten by an update with one output, lost "cake";
            # an extraction from it and an update with two outputs make no next version.
            op(
                "op-buf",
                "update",
                6,
                [unit("buf@1", "memory", "Alice likes tea and cake"), unit("m", "message", "hi")],
                [unit("buf@2", "memory", "Alice likes tea. hi")],
            ),
            op("op-ex", "extraction", 7, ["buf@2"], [unit("fact", "memory", "likes")]),
            op(
                "op-split",
                "update",
                8,
                ["buf@2"],
                [unit("buf@3", "memory", "Alice"), unit("buf@4", "memory", "hi")],
            ),
        ],
    )
    found = rows(client, "degraded_updates", project)
    assert [
        (r["memory_id"], r["old_version"], r["new_version"], r["operation"], r["lost_words"])
        for r in found
    ] == [
        ("m2", "m2@1", "m2@2", "op-u2", ["green", "car"]),
        ("m4", "m4@1", "m4@2", "op-u4", ["german"]),
        (None, "buf@1", "buf@2", "op-buf", ["cake"]),
    ]
    assert found[0]["ts"] == "2026-01-01T00:02:00Z"
    assert found[0]["operation_name"] == "step.update"
    strict = rows(client, "degraded_updates", project, min_lost_words=2)
    assert [r["new_version"] for r in strict] == ["m2@2"]


def test_degraded_updates_drops_verbatim_versions_but_not_a_word_cut_in_two(
    client: httpx.Client, project: str
) -> None:
    """The statement's pre-filter drops a new version that holds the old content verbatim
    between word boundaries; a version that holds it inside a longer word lost that word."""
    versions = {
        "appended": ("the cat sat", "the cat sat. And more"),
        "cut": ("cat", "concatenated"),
        "recased": ("Kept Words", "kept words"),
        "lost": ("x Lost y", "x y"),
        "suffix": ("old words", "new words and old words_"),
    }
    ops = [
        op(
            name,
            "update",
            minute,
            [unit(f"{name}@1", "memory", old, name)],
            [unit(f"{name}@2", "memory", new, name)],
        )
        for minute, (name, (old, new)) in enumerate(versions.items())
    ]
    post(client, project, operations=ops)
    found = rows(client, "degraded_updates", project)
    assert [(r["operation"], r["lost_words"]) for r in found] == [
        ("cut", ["cat"]),
        ("lost", ["lost"]),
    ]


def _long_entry(versions: int) -> tuple[list[dict[str, Any]], list[tuple[str, list[str]]]]:
    """One memory entry written ``versions`` times: update k reads version k-1 (and a memory of
    another entry) and writes version k, every fourth by appending a word (no word lost), the
    others by replacing the text. Returns the operations and, per update that lost words, its
    id and the words of the old version the new one lacks (every word here is a content word)."""
    other = unit("other@1", "memory", "bob likes tea", "other")
    texts = ["alice keeps item0 item1"]
    for k in range(1, versions):
        texts.append(f"{texts[-1]} note{k}" if k % 4 == 0 else f"alice keeps item{k} item{k + 1}")
    ops = [op("op-0000", "update", 0, [other], [unit("v0", "memory", texts[0], "long")])]
    lost: list[tuple[str, list[str]]] = []
    for k in range(1, versions):
        new = unit(f"v{k}", "memory", texts[k], "long")
        ops.append(op(f"op-{k:04d}", "update", 0, [f"v{k - 1}", "other@1"], [new]))
        ops[-1]["ts"] = f"2026-01-01T{k // 3600:02d}:{k // 60 % 60:02d}:{k % 60:02d}Z"
        gone = [w for w in texts[k - 1].split() if w not in texts[k].split()]
        if gone:
            lost.append((f"op-{k:04d}", gone))
    return ops, lost


def test_degraded_updates_on_an_entry_of_many_versions(client: httpx.Client, project: str) -> None:
    """Each version is compared with the one its update read, not with the rest of the entry's
    history nor with the other entry that update also read."""
    ops, lost = _long_entry(300)
    post(client, project, operations=ops)
    found = rows(client, "degraded_updates", project, limit=1000)
    assert [(r["operation"], r["lost_words"]) for r in found] == lost
    assert len(found) == 299 - 299 // 4  # the 299 updates but the appending ones
    assert {(r["memory_id"], r["old_version"], r["new_version"]) for r in found} == {
        ("long", f"v{int(o[3:]) - 1}", f"v{int(o[3:])}") for o, _ in lost
    }
    first = audit(client, "degraded_updates", project, limit=1)
    assert [r["operation"] for r in first["rows"]] == ["op-0001"] and first["next_skip"] == 1


def _db_hits(plan: Any) -> int:
    return int(plan.get("dbHits", 0)) + sum(_db_hits(c) for c in plan.get("children", []))


def test_degraded_updates_reads_in_proportion_to_an_entrys_versions(
    client: httpx.Client, project: str, neo4j_driver: Driver
) -> None:
    """The audit and the rewrite flag pair versions among each update's own inputs: four times
    the versions, about four times the reads (pairing each version with every version of its
    entry read ~16 times as much: one entry of 9,997 versions took 78 s)."""
    hits: dict[int, dict[str, int]] = {}
    for versions in (100, 400):
        name = f"{project}-{versions}"
        ops, _ = _long_entry(versions)
        post(client, name, operations=ops)
        audit_params = {"project": name, "skip": 0, "limit": 100_000, "min_lost_words": 1}
        mark_params = {"project": name, "ops": [o["id"] for o in ops], "units": []}
        hits[versions] = {
            statement: _db_hits(
                neo4j_driver.execute_query(
                    "PROFILE " + query(statement), params, database_="neo4j"
                ).summary.profile
            )
            for statement, params in (
                ("audits/degraded_updates", audit_params),
                ("ingest/mark_rewrites", mark_params),  # sets the flags it already holds
            )
        }
    for statement in hits[100]:
        assert hits[400][statement] < 5 * hits[100][statement], (statement, hits)
