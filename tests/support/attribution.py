"""Asking the running service for an attribution."""

from __future__ import annotations

import json
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


def assert_attributed(
    client: httpx.Client,
    project: str,
    case_id: str,
    blamed: tuple[str, str],
    label: object = None,
) -> dict[str, Any]:
    """The case attributed to that error type at an operation of that name (``blamed``); the
    result. ``label`` (a question, say) is shown with the result when an assertion fails."""
    result = client.post(f"/attribute/{case_id}", params={"project": project}).json()
    shown = json.dumps(result) if label is None else (label, json.dumps(result))
    assert result["status"] == "attributed", shown
    assert (result["error_type"], result["operation"]["name"]) == blamed, shown
    return dict(result)
