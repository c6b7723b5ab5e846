"""Every case id the ingest accepts can be reached again through every per-case route and the
UI: slashes (OTLP cases are ``otel:<trace>:<span>/case``), spaces, non-ASCII letters, and
characters that mean something in a URL."""

from __future__ import annotations

from urllib.parse import quote

import httpx
import pytest

from tests.support.traces import demo_batch

ODD_IDS = [
    "otel:4bf92f3577b34da6:00f067aa0ba902b7/case",
    "a/b/c",
    "with space",
    "naïve-ü-日本",
    "q?x=1&y=2#frag",
    "100%done",
    "ends-with-slash/",
    "subgraph/subgraph",
    "nul\x00inside",
]


def odd_batch(project: str) -> dict:
    """The demo trace with its first case copied under every odd id."""
    batch = demo_batch(project)
    first = batch["cases"][0]
    batch["cases"] = [first | {"id": case_id} for case_id in ODD_IDS]
    return batch


@pytest.mark.parametrize("case_id", ODD_IDS)
def test_an_odd_case_id_round_trips_through_every_per_case_route(
    client: httpx.Client, project: str, case_id: str
) -> None:
    assert client.post("/traces", json=odd_batch(project)).status_code == 200
    path = quote(case_id, safe="")
    params = {"project": project}
    case = client.get(f"/cases/{path}", params=params)
    assert case.status_code == 200, case.text
    assert case.json()["id"] == case_id
    subgraph = client.get(f"/cases/{path}/subgraph", params=params)
    assert subgraph.status_code == 200, subgraph.text
    assert subgraph.json()["nodes"]
    attribution = client.post(f"/attribute/{path}", params=params)
    assert attribution.status_code == 200, attribution.text
    assert attribution.json()["case_id"] == case_id
    page = client.get(f"/ui/cases/{path}", params=params)
    assert page.status_code == 200, page.text
    listed = client.get("/cases", params=params).json()
    assert case_id in {c["id"] for c in listed}


def test_a_missing_case_under_an_odd_id_is_a_404_body(client: httpx.Client, project: str) -> None:
    missing = client.get(f"/cases/{quote('no/such case', safe='')}", params={"project": project})
    assert missing.status_code == 404
    assert missing.json()["error"] == "not_found"


def test_a_nul_in_a_path_id_is_that_nul_never_a_slash(client: httpx.Client, project: str) -> None:
    """``n%00x`` names the id ``n<NUL>x`` (ingest stores NULs like any other character): not
    ``n/x``, which the router writes with a NUL of its own while it routes ``n%2Fx``."""
    batch = odd_batch(project)
    first = batch["cases"][0]
    batch["cases"] = [first | {"id": "n/x", "verdict": "passed"}]
    assert client.post("/traces", json=batch).status_code == 200
    params = {"project": project}
    failed = {"verdict": "failed"}

    missing = client.get("/cases/n%00x", params=params)
    assert missing.status_code == 404, missing.text
    assert missing.json()["error"] == "not_found"
    posted = client.post("/cases/n%00x/verdict", params=params, json=failed)
    assert posted.status_code == 404, posted.text
    assert client.get("/cases/n%2Fx", params=params).json()["verdict"] == "passed"

    batch["cases"] = [first | {"id": "n\x00x", "verdict": "passed"}]
    assert client.post("/traces", json=batch).status_code == 200
    assert client.get("/cases/n%00x", params=params).json()["id"] == "n\x00x"
    changed = client.post("/cases/n%00x/verdict", params=params, json=failed)
    assert changed.status_code == 200, changed.text
    assert changed.json()["id"] == "n\x00x" and changed.json()["verdict"] == "failed"
    assert client.get("/cases/n%2Fx", params=params).json()["verdict"] == "passed"
    assert client.get("/cases/n%2fx", params=params).json()["id"] == "n/x"
