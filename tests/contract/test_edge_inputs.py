"""Inputs at the edges of what the API accepts: each is a clear 4xx naming what was wrong, never a
500 (issue 9, point 8 and the fuzz run's findings; point 5: gzip bodies of many members).

Every request goes over real HTTP to the service, which writes to a real Neo4j. A 500 closes the
connection, so each check looks at the status first.
"""

from __future__ import annotations

import gzip
import itertools
import json
from typing import Any

import httpx
import pytest

from tests.support.otlp_export import as_otlp_json, export, span

JSON = {"content-type": "application/json"}
PROTOBUF = {"content-type": "application/x-protobuf"}
INT64_MAX = 2**63 - 1


def op(ts: str, **extra: Any) -> dict[str, Any]:
    return {"id": "op", "name": "step", "kind": "other", "ts": ts, **extra}


def unit(uid: str, **extra: Any) -> dict[str, Any]:
    return {"id": uid, "kind": "memory", "content": "text", **extra}


def locs(response: httpx.Response) -> list[list[Any]]:
    return [d["loc"] for d in response.json()["details"]]


# Timestamps: Python's datetime stops at years 1 and 9999, so an offset can push the UTC time out.

OVERFLOWING = ("0001-01-01T00:00:00+01:00", "9999-12-31T23:59:59-01:00")


@pytest.mark.parametrize("ts", OVERFLOWING)
def test_operation_and_unit_times_out_of_range_in_utc_are_422(
    client: httpx.Client, project: str, ts: str
) -> None:
    batch = {
        "project": project,
        "units": [unit("u", ts=ts)],
        "operations": [op(ts, outputs=[unit("inline", ts=ts)])],
    }
    response = client.post("/traces", json=batch)
    assert response.status_code == 422, response.text
    # (pydantic also reports that the inline unit is not an id, the union's other member)
    assert {tuple(loc) for loc in locs(response)} >= {
        ("body", "units", 0, "ts"),
        ("body", "operations", 0, "ts"),
        ("body", "operations", 0, "outputs", 0, "UnitIn", "ts"),
    }
    assert "UTC" in response.json()["details"][0]["msg"]


def test_times_at_the_ends_of_the_range_are_kept(client: httpx.Client, project: str) -> None:
    ends = ("0001-01-01T00:00:00-01:00", "9999-12-31T23:59:59+01:00", "2026-01-01T00:00:00-18:03")
    batch = {"project": project, "units": [unit(f"u{i}", ts=ts) for i, ts in enumerate(ends)]}
    assert client.post("/traces", json=batch).status_code == 200


def test_otlp_times_up_to_the_largest_uint64_are_kept(client: httpx.Client, project: str) -> None:
    late = export(span(1, 1, "late", 0))
    late.resource_spans[0].scope_spans[0].spans[0].start_time_unix_nano = 2**64 - 1
    response = client.post(
        "/otlp/v1/traces",
        params={"project": project},
        content=json.dumps(as_otlp_json(late)),
        headers=JSON,
    )
    assert response.status_code == 200, response.text


# The memory entry a unit belongs to is an indexed property: bounded like an id.


@pytest.mark.parametrize("key", ["memory_id", "entry_id"])
def test_memory_entry_over_256_characters_is_422(
    client: httpx.Client, project: str, key: str
) -> None:
    batch = {"project": project, "units": [unit("ok", attributes={key: "m" * 256})]}
    assert client.post("/traces", json=batch).status_code == 200
    for value in ("m" * 257, "m" * 40_000, ["m" * 300]):
        batch = {"project": project, "units": [unit("long", attributes={key: value})]}
        response = client.post("/traces", json=batch)
        assert response.status_code == 422, response.text
        assert locs(response) == [["body", "units", 0, "attributes", key]]
        assert "256" in response.json()["details"][0]["msg"]


def test_memory_entry_with_a_lone_surrogate_is_422(client: httpx.Client, project: str) -> None:
    lone = unit("s", attributes={"memory_id": "\udc00"})
    body = json.dumps({"project": project, "units": [lone]})
    response = client.post("/traces", content=body, headers=JSON)
    assert response.status_code == 422, response.text
    assert locs(response) == [["body", "units", 0, "attributes", "memory_id"]]


def test_otlp_memory_record_ids_of_any_length_are_bounded(
    client: httpx.Client, project: str
) -> None:
    attributes = {
        "gen_ai.operation.name": "update_memory",
        "gen_ai.memory.store.id": "store",
        "gen_ai.memory.record.id": "r" * 10_000,
        "memtrace.memory.content": "Alice lives in Lisbon",
    }
    response = client.post(
        "/otlp/v1/traces",
        params={"project": project},
        content=export(span(1, 1, "update_memory", 0, attributes=attributes)).SerializeToString(),
        headers=PROTOBUF,
    )
    assert response.status_code == 200, response.text


# Numbers JSON cannot carry back: 1e400 parses as infinity.


@pytest.mark.parametrize("number", ["1e400", "-1e400", "NaN", "Infinity"])
def test_non_finite_numbers_in_attributes_are_422(
    client: httpx.Client, project: str, number: str
) -> None:
    body = (
        f'{{"project": "{project}", "units": [{{"id": "v", "kind": "memory", "content": "x", '
        f'"attributes": {{"history": [{{"version": {number}}}]}}}}]}}'
    )
    response = client.post("/traces", content=body, headers=JSON)
    assert response.status_code == 422, response.text
    assert locs(response) == [["body", "units", 0, "attributes", "history", 0, "version"]]


# Paging: Neo4j's SKIP and LIMIT are 64-bit, and skip + limit must stay so too.

AUDITS = (
    "construction_loss",
    "dangling_units",
    "degraded_updates",
    "deleted_then_needed",
    "idle_operations",
    "retrieval_misses",
)
LISTS = ("/cases", "/attributions", *(f"/audits/{name}" for name in AUDITS))
CURSOR_PAGED = ("/audits/deleted_then_needed", "/audits/retrieval_misses")


@pytest.mark.parametrize("path", LISTS)
def test_skip_and_limit_out_of_range_are_422(client: httpx.Client, project: str, path: str) -> None:
    for params in (
        {"skip": 2**63},
        {"skip": INT64_MAX},
        {"skip": 10**30},
        {"skip": -1},
        {"limit": 10**30},
        {"limit": -5},
        {"limit": 0},
    ):
        response = client.get(path, params={"project": project, **params})
        assert response.status_code == 422, (params, response.text)
        assert locs(response) == [["query", next(iter(params))]]
    far = client.get(path, params={"project": project, "skip": 10**9})
    if path in CURSOR_PAGED:  # a far skip would walk every failed case before it: refused
        assert far.status_code == 422, far.text
        assert locs(far) == [["query", "skip"]] and "cursor" in far.json()["message"]
    else:
        assert far.status_code == 200, far.text


def test_audit_integer_parameters_are_bounded(client: httpx.Client, project: str) -> None:
    response = client.get(
        "/audits/degraded_updates", params={"project": project, "min_lost_words": 10**20}
    )
    assert response.status_code == 422, response.text
    assert locs(response) == [["query", "min_lost_words"]]


# Report windows: Neo4j takes offsets up to 18 hours; Python up to 23:59.


@pytest.mark.parametrize("path", ["/report", "/report.html"])
@pytest.mark.parametrize(
    "moment",
    ["2026-01-01T00:00:00-18:03", "2026-01-01T00:00:00+23:59", "2026-01-01T00:00:00-23:59"],
)
def test_report_window_with_any_offset_is_read(
    client: httpx.Client, project: str, path: str, moment: str
) -> None:
    for key in ("since", "until"):
        response = client.get(path, params={"project": project, key: moment})
        assert response.status_code == 200, (key, response.text)


@pytest.mark.parametrize("path", ["/report", "/report.html"])
@pytest.mark.parametrize("moment", OVERFLOWING)
def test_report_window_out_of_range_in_utc_is_422(
    client: httpx.Client, project: str, path: str, moment: str
) -> None:
    for key in ("since", "until"):
        response = client.get(path, params={"project": project, key: moment})
        assert response.status_code == 422, (key, response.text)
        assert locs(response) == [["query", key]]


# OTLP bodies.


@pytest.mark.parametrize("depth", [980, 5000])  # past the JSON decoder's bound at 5,000
def test_otlp_json_nested_too_deeply_is_400(client: httpx.Client, project: str, depth: int) -> None:
    nested = "[" * depth + "]" * depth
    value = f'{{"arrayValue": {{"values": [{nested}]}}}}'
    attribute = f'{{"key": "k", "value": {value}}}'
    body = f'{{"resourceSpans": [{{"resource": {{"attributes": [{attribute}]}}}}]}}'
    response = client.post(
        "/otlp/v1/traces", params={"project": project}, content=body, headers=JSON
    )
    assert response.status_code == 400, response.text
    assert "nested too deeply" in response.json()["message"]


def gzip_members(*parts: bytes) -> bytes:
    return b"".join(gzip.compress(part) for part in parts)


def post_gzip(
    client: httpx.Client, project: str, body: bytes, headers: dict[str, str] = PROTOBUF
) -> httpx.Response:
    return client.post(
        "/otlp/v1/traces",
        params={"project": project},
        content=body,
        headers={**headers, "content-encoding": "gzip"},
    )


def test_gzip_of_many_empty_members_is_refused(client: httpx.Client, project: str) -> None:
    # 7.9 MiB of empty members took 63 s of CPU (each member copied the rest of the body).
    many = gzip_members(*[b""] * 400_000)
    assert len(many) < 8 * 1024 * 1024
    response = post_gzip(client, project, many)
    assert response.status_code == 400, response.text
    [detail] = response.json()["details"]
    assert (detail["loc"], detail["max_members"]) == (["body"], 64)
    assert client.get("/readyz").status_code == 200


def test_gzip_members_up_to_the_cap_inflate_to_the_whole_export(
    client: httpx.Client, project: str
) -> None:
    # An OTLP/JSON export of 1,000 spans cut into pieces across the inflater's 64 KiB input
    # steps, then padded with empty members up to the cap: the whole export arrives.
    whole = export(*[span(1, i, f"step {i}", i / 100) for i in range(1, 1001)])
    raw = json.dumps(as_otlp_json(whole)).encode()
    cuts = [0, 1, 70_000, 70_001, 200_000, len(raw)]
    pieces = [raw[a:b] for a, b in itertools.pairwise(cuts)]
    body = gzip_members(*pieces, *[b""] * (64 - len(pieces)))
    response = post_gzip(client, project, body, JSON)
    assert response.status_code == 200, response.text
    assert response.json()["memtrace"]["created"]["operations"] == 1000

    over = post_gzip(client, project, body + gzip.compress(b""), JSON)
    assert over.status_code == 400
    assert "64" in over.json()["message"]
