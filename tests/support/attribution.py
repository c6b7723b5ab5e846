"""Asking the running service for an attribution."""

from __future__ import annotations

from typing import Any

import httpx


def attribute(client: httpx.Client, project: str, case_id: str, **body: object) -> httpx.Response:
    return client.post(f"/attribute/{case_id}", params={"project": project}, json=body or None)


def stable_results(client: httpx.Client, project: str, cases: list[str]) -> list[dict[str, Any]]:
    """Each case attributed afresh, without the fields that differ from run to run (when it was
    made, how long it took): what two runs of the same cases are compared on."""
    out = []
    for case in cases:
        response = attribute(client, project, case, refresh=True)
        assert response.status_code == 200, response.text
        result = response.json()
        result.pop("created_at")
        result["cost"].pop("seconds")
        out.append(result)
    return out
