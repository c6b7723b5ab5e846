"""How attribution reads the graph, made cheaper without changing a result: timestamps read as
three integers, and a job's cases sharing one read of their conversation's messages."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import httpx
import pytest
from neo4j import Driver

from service.attribution.rows import timestamp
from tests.attribution.test_attribution_job import wait_for
from tests.attribution.test_attribution_scope import _later_repeat, _send, conversation
from tests.support.attribution import stable_results


def _zone(hours: float) -> timezone:
    return timezone(timedelta(hours=hours))


TIMES = [
    ("2023-05-08T13:56:00Z", datetime(2023, 5, 8, 13, 56, tzinfo=UTC)),
    ("2023-05-08T13:56:00.123456789Z", datetime(2023, 5, 8, 13, 56, 0, 123456, tzinfo=UTC)),
    # another day in UTC than where it was said
    ("2023-05-08T23:30:00.5-04:00", datetime(2023, 5, 8, 23, 30, 0, 500000, tzinfo=_zone(-4))),
    ("2023-05-08T00:15:00+05:45", datetime(2023, 5, 8, 0, 15, tzinfo=_zone(5.75))),
    ("1969-12-31T23:59:59.000001Z", datetime(1969, 12, 31, 23, 59, 59, 1, tzinfo=UTC)),
    # before year 1 and after year 9999 in UTC (the driver cannot decode these at all)
    ("0001-01-01T00:00:00+01:00", datetime(1, 1, 1, tzinfo=_zone(1))),
    (
        "9999-12-31T23:59:59.999999999-01:00",
        datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=_zone(-1)),
    ),
]


@pytest.mark.parametrize(("text", "expected"), TIMES)
def test_a_timestamp_read_as_integers_is_the_drivers_datetime(
    neo4j_driver: Driver, text: str, expected: datetime
) -> None:
    records, _, _ = neo4j_driver.execute_query(
        "WITH datetime($text) AS ts "
        "RETURN [ts.epochSeconds, ts.nanosecond, ts.offsetSeconds] AS parts",
        text=text,
    )
    mine = timestamp(records[0]["parts"])
    assert mine is not None
    # the same instant and the same local time, which the judge reads dates from
    assert (mine, mine.date(), mine.time(), mine.utcoffset()) == (
        expected,
        expected.date(),
        expected.time(),
        expected.utcoffset(),
    )
    if 1 < expected.year < 9999:  # what the driver's DateTime gave before, where it can
        native = neo4j_driver.execute_query("RETURN datetime($text) AS ts", text=text)[0][0]
        assert native["ts"].to_native() == mine
        assert native["ts"].to_native().utcoffset() == mine.utcoffset()


def _job_results(client: httpx.Client, project: str) -> dict[str, dict[str, Any]]:
    started = client.post("/attribution-jobs", params={"project": project}, json={"refresh": True})
    assert started.status_code == 202, started.text
    job = wait_for(client, project, started.json()["id"], {"completed"})
    page = client.get(
        f"/attribution-jobs/{job['id']}/results", params={"project": project, "limit": 1000}
    ).json()
    out = {}
    for result in page:
        result.pop("created_at")
        result["cost"].pop("seconds")
        out[result["case_id"]] = result
    return out


def _unscoped(prefix: str) -> dict[str, Any]:
    """A conversation whose lineage names no conversation, user or session: its cases search
    the whole project (read per case, not shared)."""
    batch = conversation(prefix, "unused")
    for op in batch["operations"]:
        op["attributes"] = {}
    return batch


def test_a_job_reads_each_conversation_once_and_gets_the_per_case_results(
    client: httpx.Client, project: str
) -> None:
    # Three conversations with two failed cases each (cases in flight at once), each with a
    # later session repeating its evidence: a shared read that ignored each case's answer time
    # would take the later message as evidence. One conversation names no scope at all.
    _send(
        client,
        project,
        conversation("a-", "alice"),
        conversation("b-", "bob"),
        _unscoped("u-"),
        _later_repeat("a-", "alice"),
        _later_repeat("b-", "bob"),
    )
    cases = [f"{p}case{n}" for p in ("a-", "b-", "u-") for n in (1, 2)]
    by_job = _job_results(client, project)
    one_by_one = dict(zip(cases, stable_results(client, project, cases), strict=True))
    assert sorted(by_job) == sorted(cases)
    assert by_job == one_by_one
    assert by_job["a-case1"]["operation"]["id"] == "a-x1"
    assert "a-late" not in by_job["a-case1"]["evidence_path"]
