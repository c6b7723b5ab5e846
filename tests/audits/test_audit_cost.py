"""A page of ``idle_operations`` costs its rows, not the project: the statement the service runs
is profiled on a project beside ten times more busy operations (with inputs and outputs), and
must read the same database hits and the same rows, without a label scan."""

from __future__ import annotations

import re
from typing import Any

import httpx
from neo4j import Driver

from cypher import query

TS = "2026-03-01T10:00:{:02d}Z"


def _op(op_id: str, second: int, inputs: list[Any], outputs: list[Any]) -> dict[str, Any]:
    return {
        "id": op_id,
        "name": "step",
        "kind": "extraction",
        "ts": TS.format(second % 60),
        "inputs": inputs,
        "outputs": outputs,
    }


def _busy(start: int, n: int) -> list[dict[str, Any]]:
    """``n`` operations that each read a message and write a memory (none of them idle)."""
    return [
        _op(
            f"busy-{i}",
            i,
            [{"id": f"m-{i}", "kind": "message", "content": f"turn {i}"}],
            [{"id": f"f-{i}", "kind": "memory", "content": f"fact {i}"}],
        )
        for i in range(start, start + n)
    ]


def _plans(profile: dict[str, Any]) -> list[str]:
    name = re.split(r"[@(]", profile["operatorType"])[0]
    return [name, *(t for c in profile.get("children", []) for t in _plans(c))]


def _hits(profile: dict[str, Any]) -> int:
    return int(profile.get("dbHits", 0)) + sum(_hits(c) for c in profile.get("children", []))


def _page(driver: Driver, project: str) -> tuple[list[str], int, list[str]]:
    with driver.session(database="neo4j") as session:
        result = session.run(
            "PROFILE " + query("audits/idle_operations"),
            project=project,
            skip=0,
            limit=50,
            kind=None,
        )
        ids = [record["operation"] for record in result]
        profile = result.consume().profile
    assert profile is not None
    return ids, _hits(profile), _plans(profile)


def test_a_page_of_idle_operations_costs_the_same_beside_ten_times_more_operations(
    client: httpx.Client, project: str, neo4j_driver: Driver
) -> None:
    idle = [
        _op("idle-none", 1, [], []),
        _op("idle-out", 2, [{"id": "lone", "kind": "message", "content": "x"}], []),
        _op("idle-in", 3, [], [{"id": "ghost-out", "kind": "memory", "content": "y"}]),
    ]
    sent = client.post("/traces", json={"project": project, "operations": idle + _busy(0, 30)})
    assert sent.status_code == 200, sent.text
    small = _page(neo4j_driver, project)
    for start in range(30, 330, 100):
        sent = client.post("/traces", json={"project": project, "operations": _busy(start, 100)})
        assert sent.status_code == 200, sent.text
    large = _page(neo4j_driver, project)
    assert small[0] == large[0] == ["idle-none", "idle-out", "idle-in"]
    assert large[1] <= small[1] * 1.1, (small[1], large[1])
    assert not {"NodeByLabelScan", "AllNodesScan"} & set(large[2]), large[2]
