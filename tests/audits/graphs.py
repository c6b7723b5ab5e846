"""Small hand-made graphs for the audit tests, posted over HTTP, and an audit's page read back
with its shape checked (every row exactly the declared columns, in order)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import httpx


def t(minute: int) -> str:
    return f"2026-01-01T00:{minute:02d}:00Z"


def unit(
    uid: str, kind: str, content: str, entry: str | None = None, **attrs: Any
) -> dict[str, Any]:
    attributes = {**attrs, **({"memory_id": entry} if entry else {})}
    return {"id": uid, "kind": kind, "content": content, "attributes": attributes}


def op(
    oid: str, kind: str, minute: int, inputs: list[Any], outputs: list[Any], **extra: Any
) -> dict[str, Any]:
    return {
        "id": oid,
        "name": f"step.{kind}",
        "kind": kind,
        "session_id": "s1",
        "ts": t(minute),
        "inputs": inputs,
        "outputs": outputs,
        **extra,
    }


def case(
    cid: str, answer: str, expected: str, evidence: list[str], verdict: str = "failed"
) -> dict[str, Any]:
    return {
        "id": cid,
        "question": f"question of {cid}?",
        "expected_answer": expected,
        "answer_unit": answer,
        "verdict": verdict,
        "evidence_units": evidence,
    }


def post(
    client: httpx.Client,
    project: str,
    units: Sequence[dict[str, Any]] = (),
    operations: Sequence[dict[str, Any]] = (),
    cases: Sequence[dict[str, Any]] = (),
) -> None:
    batch = {
        "project": project,
        "units": list(units),
        "operations": list(operations),
        "cases": list(cases),
    }
    response = client.post("/traces", json=batch)
    assert response.status_code == 200, response.text


def audit(client: httpx.Client, name: str, project: str, **params: Any) -> dict[str, Any]:
    response = client.get(f"/audits/{name}", params={"project": project, **params})
    assert response.status_code == 200, response.text
    page: dict[str, Any] = response.json()
    assert set(page) >= {"rows", "next_skip", "columns"}
    for row in page["rows"]:
        assert list(row) == page["columns"]  # exactly the declared columns, in order
    return page


def rows(client: httpx.Client, name: str, project: str, **params: Any) -> list[dict[str, Any]]:
    return list(audit(client, name, project, **params)["rows"])
