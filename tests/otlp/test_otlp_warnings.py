"""What OTLP exports were told, where their sender can read it: GET /otlp/warnings and the
count in GET /projects (an exporter drops a 200's warnings and only logs a refusal)."""

from __future__ import annotations

import httpx
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from tests.support.otlp_export import export, span

PROTOBUF = {"content-type": "application/x-protobuf"}


def _send(client: httpx.Client, project: str, *spans: Span) -> httpx.Response:
    return client.post(
        "/otlp/v1/traces",
        params={"project": project},
        content=export(*spans).SerializeToString(),
        headers=PROTOBUF,
    )


def test_warnings_and_refusals_are_kept_per_project(client: httpx.Client, project: str) -> None:
    other = project + "-quiet"
    assert _send(client, other, span(1, 1, "fine", 0)).status_code == 200
    bad_kind = span(2, 1, "step", 0, attributes={"memtrace.operation.kind": "teleport"})
    assert _send(client, project, bad_kind).status_code == 200
    no_answer = span(3, 1, "agent.ask", 0, attributes={"memtrace.case.id": "lost"})
    assert _send(client, project, no_answer).status_code == 422

    log = client.get("/otlp/warnings", params={"project": project}).json()
    assert log["project"] == project
    assert log["total"] == 2
    refused, warned = log["warnings"]  # newest first
    assert refused["status"] == 422
    assert "'lost'" in refused["message"]
    assert warned["status"] == 200
    assert "memtrace.operation.kind: not one of" in warned["message"]

    quiet = client.get("/otlp/warnings", params={"project": other}).json()
    assert quiet == {"project": other, "total": 0, "warnings": []}
    listed = {p["project"]: p for p in client.get("/projects").json()}
    assert listed[project]["otlp_warnings"] == 2
    assert listed[other]["otlp_warnings"] == 0
