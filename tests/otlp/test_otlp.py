"""POST /otlp/v1/traces: OTLP/HTTP exports (protobuf, OTLP/JSON, gzip) through the running service
into a real Neo4j, checked in the graph itself."""

from __future__ import annotations

import gzip
import json
from typing import Any

import httpx
from neo4j import Driver
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

from tests.support.graph import graph_counts
from tests.support.otlp_export import as_otlp_json, export, messages, records, span
from tests.support.servers import ServiceHandle

PROTOBUF = {"content-type": "application/x-protobuf"}
JSON = {"content-type": "application/json"}
SEARCH = "otel:00000000000000000000000000000001:0000000000000002"
CHAT = "otel:00000000000000000000000000000001:0000000000000003"


def answer_turn() -> ExportTraceServiceRequest:
    """One agent turn: a memory search and the LLM call answering with what it found."""
    return export(
        span(1, 1, "agent.turn", 0.0),
        span(
            1,
            2,
            "search_memory alice",
            0.1,
            parent=1,
            attributes={
                "gen_ai.operation.name": "search_memory",
                "gen_ai.memory.store.id": "mem0",
                "gen_ai.memory.query.text": "Where does Alice live?",
                "gen_ai.memory.records": records(("r1", "Alice lives in Lisbon"), (None, "Tea")),
            },
        ),
        span(
            1,
            3,
            "chat gpt-4.1",
            0.2,
            parent=1,
            attributes={
                "gen_ai.operation.name": "chat",
                "gen_ai.input.messages": messages(("user", "Where does Alice live?")),
                "gen_ai.output.messages": messages(("assistant", "In Lisbon.")),
            },
        ),
    )


def send(client: httpx.Client, request: ExportTraceServiceRequest, project: str) -> httpx.Response:
    return client.post(
        "/otlp/v1/traces",
        params={"project": project},
        content=request.SerializeToString(),
        headers=PROTOBUF,
    )


def operations(driver: Driver, project: str) -> dict[str, dict[str, Any]]:
    records_, _, _ = driver.execute_query(
        "MATCH (o:Operation {project: $project}) RETURN o.id AS id, o.kind AS kind, "
        "o.name AS name, o.system AS system, o.session_id AS session, o.attributes AS attributes",
        project=project,
        database_="neo4j",
    )
    return {r["id"]: {**r.data(), "attributes": json.loads(r["attributes"])} for r in records_}


def edges(driver: Driver, project: str, op_id: str) -> dict[str, list[tuple[str, str]]]:
    """``{"CONSUMES": [(unit kind, unit id), ...], "PRODUCES": [...]}`` in position order."""
    records_, _, _ = driver.execute_query(
        "MATCH (:Operation {project: $project, id: $id})-[r:CONSUMES|PRODUCES]->(u:Unit) "
        "RETURN type(r) AS type, u.kind AS kind, u.id AS unit ORDER BY type, r.position",
        project=project,
        id=op_id,
        database_="neo4j",
    )
    found: dict[str, list[tuple[str, str]]] = {"CONSUMES": [], "PRODUCES": []}
    for r in records_:
        found[r["type"]].append((r["kind"], r["unit"]))
    return found


def unit(driver: Driver, project: str, unit_id: str) -> dict[str, Any]:
    records_, _, _ = driver.execute_query(
        "MATCH (u:Unit {project: $project, id: $id}) RETURN u.kind AS kind, u.content AS content, "
        "u.attributes AS attributes",
        project=project,
        id=unit_id,
        database_="neo4j",
    )
    row = records_[0]
    return {**row.data(), "attributes": json.loads(row["attributes"] or "{}")}


def test_search_and_chat_become_retrieval_and_response(
    client: httpx.Client, project: str, neo4j_driver: Driver
) -> None:
    response = send(client, answer_turn(), project)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "application/x-protobuf"
    answer = ExportTraceServiceResponse()
    answer.ParseFromString(response.content)
    assert answer.partial_success.rejected_spans == 0

    ops = operations(neo4j_driver, project)
    assert {i: o["kind"] for i, o in ops.items()} == {
        "otel:00000000000000000000000000000001:0000000000000001": "other",
        SEARCH: "retrieval",
        CHAT: "response",
    }
    chat = ops[CHAT]
    assert chat["system"] == "mem-agent"
    assert chat["session"] is None  # a trace is not a session: the trace id is under otel
    assert chat["attributes"]["otel"]["trace_id"] == "00000000000000000000000000000001"
    assert chat["attributes"]["gen_ai.operation.name"] == "chat"
    assert chat["attributes"]["otel"]["parent_span_id"] == "0000000000000001"
    assert chat["attributes"]["otel"]["status"]["code"] == "ok"

    search = edges(neo4j_driver, project, SEARCH)
    [(query_kind, _), (memory_kind, memory_id)] = search["CONSUMES"]
    assert (query_kind, memory_kind) == ("query", "memory")
    assert memory_id.startswith("memory:mem0:r1@")
    assert unit(neo4j_driver, project, memory_id)["attributes"]["memory_id"] == "mem0:r1"
    contexts = [u for k, u in search["PRODUCES"] if k == "context"]
    assert [unit(neo4j_driver, project, c)["content"] for c in contexts] == [
        "Alice lives in Lisbon",
        "Tea",
    ]

    answered = edges(neo4j_driver, project, CHAT)
    assert answered["CONSUMES"] == [
        ("message", answered["CONSUMES"][0][1]),
        *[("context", c) for c in contexts],
    ]
    [(kind, answer_id)] = answered["PRODUCES"]
    assert kind == "answer"
    assert unit(neo4j_driver, project, answer_id)["content"] == "In Lisbon."


def test_memory_writes_become_versions_and_tombstones(
    client: httpx.Client, project: str, neo4j_driver: Driver
) -> None:
    def write(sid: int, at: float, operation: str, record: str, content: str = "") -> Any:
        attributes = {
            "gen_ai.operation.name": operation,
            "gen_ai.memory.store.id": "mem0",
            "gen_ai.memory.record.id": record,
        }
        if content:
            attributes["memtrace.memory.content"] = content
        return span(7, sid, operation, at, parent=1, attributes=attributes)

    request = export(
        span(7, 1, "memory.add", 0.0),
        span(
            7,
            2,
            "chat extract",
            0.1,
            parent=1,
            attributes={
                "gen_ai.operation.name": "chat",
                "gen_ai.prompt.0.role": "user",
                "gen_ai.prompt.0.content": "Alice: I moved to Porto and gave away my dog",
                "gen_ai.completion.0.content": '{"facts": ["Lives in Porto"]}',
            },
        ),
        write(3, 0.2, "update_memory", "home", "Lives in Lisbon"),
        write(4, 0.3, "update_memory", "home", "Lives in Porto"),
        span(
            7,
            5,
            "delete_memory",
            0.4,
            parent=1,
            attributes={  # records as an array attribute this time, not a JSON string
                "gen_ai.operation.name": "delete_memory",
                "gen_ai.memory.store.id": "mem0",
                "gen_ai.memory.records": [{"id": "dog", "content": "Has a dog"}],
            },
        ),
    )
    assert send(client, request, project).status_code == 200
    ops = operations(neo4j_driver, project)
    op = "otel:00000000000000000000000000000007:{:016x}".format
    assert [ops[op(i)]["kind"] for i in (2, 3, 4, 5)] == [
        "extraction",
        "update",
        "update",
        "deletion",
    ]
    facts = edges(neo4j_driver, project, op(2))["PRODUCES"][0][1]
    first = edges(neo4j_driver, project, op(3))
    [(_, v1)] = first["PRODUCES"]
    assert first["CONSUMES"] == [("answer", facts)]
    second = edges(neo4j_driver, project, op(4))
    [(_, v2)] = second["PRODUCES"]
    assert second["CONSUMES"] == [("answer", facts), ("memory", v1)]  # the version it replaces
    assert v1 != v2
    assert unit(neo4j_driver, project, v1)["attributes"]["memory_id"] == "mem0:home"
    assert unit(neo4j_driver, project, v2)["attributes"]["memory_id"] == "mem0:home"
    assert unit(neo4j_driver, project, v2)["content"] == "Lives in Porto"
    deleted = edges(neo4j_driver, project, op(5))
    assert deleted["PRODUCES"] == [("tombstone", "tombstone:mem0:dog")]
    [(_, dog)] = [c for c in deleted["CONSUMES"] if c[0] == "memory"]
    assert unit(neo4j_driver, project, dog)["content"] == "Has a dog"
    stone = unit(neo4j_driver, project, "tombstone:mem0:dog")
    assert stone["attributes"]["memory_id"] == "mem0:dog"


def test_unknown_spans_are_kept_as_other(
    client: httpx.Client, project: str, neo4j_driver: Driver
) -> None:
    request = export(
        span(9, 1, "GET /users", 0.0, attributes={"http.route": "/users", "n": 3}),
        span(9, 2, "", 0.1, parent=1, status_error=True),
        span(
            9,
            3,
            "search",
            0.2,
            parent=1,
            attributes={"gen_ai.operation.name": "search_memory", "gen_ai.memory.records": "?"},
        ),
    )
    request.resource_spans[0].scope_spans[0].spans[0].events.add(name="cache miss")
    response = client.post(
        "/otlp/v1/traces",
        params={"project": project},
        json=as_otlp_json(request),
    )
    assert response.status_code == 200, response.text
    body = response.json()
    warning = body["partialSuccess"]["errorMessage"]  # accepted, with a warning
    assert "spans[2].attributes.gen_ai.memory.records: not a list of records" in warning
    assert body["memtrace"]["created"] == {"units": 0, "operations": 3, "cases": 0}
    ops = operations(neo4j_driver, project)
    root = ops["otel:00000000000000000000000000000009:0000000000000001"]
    child = ops["otel:00000000000000000000000000000009:0000000000000002"]
    assert (root["kind"], root["name"]) == ("other", "GET /users")
    assert root["attributes"]["http.route"] == "/users"
    assert root["attributes"]["n"] == 3
    assert root["attributes"]["otel"]["events"][0]["name"] == "cache miss"
    assert (child["kind"], child["name"]) == ("other", "(unnamed span)")
    assert child["attributes"]["otel"]["status"]["code"] == "error"
    search = ops["otel:00000000000000000000000000000009:0000000000000003"]
    assert (search["kind"], search["attributes"]["gen_ai.memory.records"]) == ("retrieval", "?")

    empty = client.post("/otlp/v1/traces", params={"project": project}, json={})
    assert empty.status_code == 200
    assert empty.json() == {
        "partialSuccess": {},
        "memtrace": {
            "project": project,
            "created": {"units": 0, "operations": 0, "cases": 0},
            "existing": {"units": 0, "operations": 0, "cases": 0},
            "spans": 0,
            "warnings": [],
        },
    }


def test_resending_in_any_encoding_changes_nothing(
    client: httpx.Client, project: str, neo4j_driver: Driver
) -> None:
    request = answer_turn()
    assert send(client, request, project).status_code == 200
    before = graph_counts(neo4j_driver, project)
    assert send(client, request, project).status_code == 200
    assert graph_counts(neo4j_driver, project) == before
    # The same export as gzip-compressed OTLP/JSON maps to the very same batch.
    again = client.post(
        "/otlp/v1/traces",
        params={"project": project},
        content=gzip.compress(json.dumps(as_otlp_json(request)).encode()),
        headers={**JSON, "content-encoding": "gzip"},
    )
    assert again.status_code == 200, again.text
    counts = again.json()["memtrace"]
    assert counts["created"] == {"units": 0, "operations": 0, "cases": 0}
    assert counts["existing"] == {"units": 6, "operations": 3, "cases": 0}
    assert graph_counts(neo4j_driver, project) == before


def test_undecodable_bodies_are_400_without_echo(client: httpx.Client, project: str) -> None:
    def post(content: bytes, headers: dict[str, str]) -> httpx.Response:
        return client.post(
            "/otlp/v1/traces", params={"project": project}, content=content, headers=headers
        )

    broken = post(b"\x0a\xff\xff\xff", PROTOBUF)
    assert broken.status_code == 400
    assert broken.json()["error"] == "malformed_request"
    assert "protobuf" in broken.json()["message"]

    not_json = post(b'{"resourceSpans": [', JSON)
    assert not_json.status_code == 400
    assert "line 1" in not_json.json()["message"]

    secret = "SECRET-user-content"
    spans = [{"traceId": "ab" * 16, "spanId": "cd" * 8, "name": "x", "startTimeUnixNano": secret}]
    wrong_type = post(
        json.dumps({"resourceSpans": [{"scopeSpans": [{}, {"spans": spans}]}]}).encode(), JSON
    )
    assert wrong_type.status_code == 400
    assert wrong_type.json()["details"][0]["loc"] == [
        *["resourceSpans", 0, "scopeSpans", 1, "spans", 0, "startTimeUnixNano"]
    ]
    assert "resourceSpans[0].scopeSpans[1].spans[0].startTimeUnixNano" in wrong_type.text
    assert secret not in wrong_type.text

    spans[0] = {"traceId": secret, "spanId": "cd" * 8, "name": "x"}
    bad_id = post(
        json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}).encode(), JSON
    )
    assert bad_id.status_code == 400
    assert "traceId must be 32 hex digits" in bad_id.json()["message"]
    assert secret not in bad_id.text

    no_ids = export(span(1, 1, "x", 0))
    no_ids.resource_spans[0].scope_spans[0].spans[0].span_id = b""
    missing = post(no_ids.SerializeToString(), PROTOBUF)
    assert missing.status_code == 400
    assert "spanId must be 8 bytes" in missing.json()["message"]

    truncated = post(
        gzip.compress(answer_turn().SerializeToString())[:-10],
        PROTOBUF | {"content-encoding": "gzip"},
    )
    assert truncated.status_code == 400
    assert "gzip" in truncated.json()["message"]


def test_an_invalid_case_is_422_at_its_span(client: httpx.Client, project: str) -> None:
    """A bad attribute value is dropped with a warning (tests/otlp/test_otlp_lineage.py); a case
    that cannot be stored at all is refused, located at its span."""
    loc = ["resourceSpans", 0, "scopeSpans", 0, "spans", 1, "attributes"]
    long_case = export(span(1, 1, "x", 0, attributes={"memtrace.case.id": "c" * 300}))
    response = send(client, long_case, project)
    assert response.status_code == 422
    assert response.json()["details"][0]["loc"][:7] == [*loc[:5], 0, "case"]
    assert client.get("/cases", params={"project": project}).json() == []


def test_unsupported_media_is_415(client: httpx.Client, project: str) -> None:
    body = answer_turn().SerializeToString()
    for headers in (
        {"content-type": "text/plain"},
        {},
        {**PROTOBUF, "content-encoding": "br"},
    ):
        response = client.post(
            "/otlp/v1/traces", params={"project": project}, content=body, headers=headers
        )
        assert response.status_code == 415, headers
        assert response.json()["error"] == "unsupported_media_type"


def test_oversize_and_gzip_bombs_are_413(client: httpx.Client, project: str) -> None:
    bomb = gzip.compress(b"\0" * (9 * 1024 * 1024))  # ~9 KB that inflate to 9 MiB > 8 MiB
    assert len(bomb) < 100_000
    response = client.post(
        "/otlp/v1/traces",
        params={"project": project},
        content=bomb,
        headers={**PROTOBUF, "content-encoding": "gzip"},
    )
    assert response.status_code == 413
    assert response.json()["error"] == "payload_too_large"
    plain = client.post(
        "/otlp/v1/traces",
        params={"project": project},
        content=b"\0" * (9 * 1024 * 1024),
        headers=PROTOBUF,
    )
    assert plain.status_code == 413


def test_project_from_query_or_header(
    client: httpx.Client, project: str, neo4j_driver: Driver
) -> None:
    other = project + "-other"
    body = answer_turn().SerializeToString()
    by_header = client.post(
        "/otlp/v1/traces", content=body, headers={**PROTOBUF, "x-memtrace-project": other}
    )
    assert by_header.status_code == 200
    assert send(client, answer_turn(), project).status_code == 200
    assert len(operations(neo4j_driver, project)) == len(operations(neo4j_driver, other)) == 3
    differ = client.post(
        "/otlp/v1/traces",
        params={"project": project},
        content=body,
        headers={**PROTOBUF, "x-memtrace-project": other},
    )
    assert differ.status_code == 422
    bad = client.post(
        "/otlp/v1/traces", content=body, headers={**PROTOBUF, "x-memtrace-project": "no spaces"}
    )
    assert bad.status_code == 422


def test_neo4j_down_is_503(down_service: ServiceHandle) -> None:
    with httpx.Client(base_url=down_service.url, timeout=30) as c:
        response = c.post(
            "/otlp/v1/traces", content=answer_turn().SerializeToString(), headers=PROTOBUF
        )
    assert response.status_code == 503
    assert response.headers["retry-after"].isdigit()
    assert response.json()["error"] == "unavailable"


def remembered(
    trace: int, turn: str, fact: str, record: str, at: float = 0.0
) -> ExportTraceServiceRequest:
    """A memory ``add`` at ``at`` seconds: an LLM call extracting ``fact`` from ``turn``, then
    its write of ``record``."""
    return export(
        span(trace, 1, "memory.add", at),
        span(
            trace,
            2,
            "chat extract facts",
            at + 0.1,
            parent=1,
            attributes={
                "gen_ai.operation.name": "chat",
                "gen_ai.input.messages": messages(("user", turn)),
                "gen_ai.output.messages": messages(("assistant", fact)),
            },
        ),
        span(
            trace,
            3,
            "update_memory",
            at + 0.2,
            parent=1,
            attributes={
                "gen_ai.operation.name": "update_memory",
                "gen_ai.memory.store.id": "mem0",
                "gen_ai.memory.records": records((record, fact)),
            },
        ),
    )


def asked(
    trace: int, question: str, found: tuple[str, str], answer: str, expected: str, case: str
) -> ExportTraceServiceRequest:
    """An agent turn: a memory search returning ``found`` (record, content), then the LLM call
    answering ``question`` from it, marked as the failed case ``case``."""
    return export(
        span(trace, 1, "agent.turn", 60.0),
        span(
            trace,
            2,
            "search_memory",
            60.1,
            parent=1,
            attributes={
                "gen_ai.operation.name": "search_memory",
                "gen_ai.memory.store.id": "mem0",
                "gen_ai.memory.query.text": question,
                "gen_ai.memory.records": records(found),
            },
        ),
        span(
            trace,
            3,
            "chat answer",
            60.2,
            parent=1,
            attributes={
                "gen_ai.operation.name": "chat",
                "gen_ai.input.messages": messages(("user", question)),
                "gen_ai.output.messages": messages(("assistant", answer)),
                "memtrace.case.id": case,
                "memtrace.case.question": question,
                "memtrace.case.expected_answer": expected,
                "memtrace.case.verdict": "failed",
            },
        ),
    )


def test_a_case_from_spans_is_attributed(client: httpx.Client, project: str) -> None:
    """The memory held the fact; the search did not return it: a RetrievalError."""
    fact = "Alice's sister lives in Denver"
    remember = remembered(20, "Alice: my sister moved to Denver.", fact, "sister")
    question = "Where does Alice's sister live?"
    ask = asked(21, question, ("hobby", "Alice likes hiking"), "I do not know.", "Denver", "sister")
    assert send(client, remember, project).status_code == 200
    assert send(client, ask, project).status_code == 200
    case = client.get("/cases/sister", params={"project": project}).json()
    assert case["verdict"] == "failed"
    result = client.post("/attribute/sister", params={"project": project}).json()
    assert result["status"] == "attributed", result["reason"]
    assert result["error_type"] == "RetrievalError"
    assert result["operation"]["id"] == f"otel:{21:032x}:{2:016x}"


def test_the_question_a_chat_was_asked_is_not_its_context(
    client: httpx.Client, project: str
) -> None:
    """The answering call's user message is the question; a question naming its answer among
    the choices ("a dog or a cat?") must not read as a context that carried it. The extraction
    kept the visit, not the dog: an ExtractionError at the extracting call."""
    fact = "Alice visited a shelter"
    remember = remembered(30, "Alice: we adopted a dog from the shelter last week!", fact, "visit")
    ask = asked(31, "Did Alice adopt a dog or a cat?", ("visit", fact), "A cat.", "a dog", "pet")
    assert send(client, remember, project).status_code == 200
    assert send(client, ask, project).status_code == 200
    result = client.post("/attribute/pet", params={"project": project}).json()
    assert result["error_type"] == "ExtractionError", result["reason"]
    assert result["operation"]["id"] == f"otel:{30:032x}:{2:016x}"


def test_a_fact_the_searched_store_still_held_is_a_retrieval_error(
    client: httpx.Client, project: str
) -> None:
    """The evidence's own record was overwritten, but the store the search names held the fact
    in another record (written by a tool, from no message): losing one copy decided nothing, and
    the search that did not return the other is blamed. An OpenTelemetry search lists only what
    it returned, so the other record is found through the store's writes."""
    fact = "Alice's sister lives in Denver"
    told = remembered(40, "Alice: my sister moved to Denver.", fact, "sister", at=0.0)
    synced = export(
        span(41, 1, "profile.sync", 10.0),
        span(
            41,
            2,
            "update_memory",
            10.1,
            parent=1,
            attributes={
                "gen_ai.operation.name": "update_memory",
                "gen_ai.memory.store.id": "mem0",
                "gen_ai.memory.records": records(("family", "Alice's sister lives in Denver.")),
            },
        ),
    )
    nurse = "Alice's sister is a nurse"
    overwritten = remembered(42, "Alice: my sister is a nurse.", nurse, "sister", at=20.0)
    question = "Where does Alice's sister live?"
    ask = asked(43, question, ("hobby", "Alice likes hiking"), "I do not know.", "Denver", "city")
    for request in (told, synced, overwritten, ask):
        assert send(client, request, project).status_code == 200
    result = client.post("/attribute/city", params={"project": project}).json()
    assert result["error_type"] == "RetrievalError", result["reason"]
    assert result["operation"]["id"] == f"otel:{43:032x}:{2:016x}"


def test_redefining_a_unit_is_409_and_writes_nothing(
    client: httpx.Client, project: str, neo4j_driver: Driver
) -> None:
    taken = {
        "project": project,
        "units": [{"id": "tombstone:mem0:dog", "kind": "tombstone", "content": "other content"}],
    }
    assert client.post("/traces", json=taken).status_code == 200
    delete = export(
        span(
            5,
            1,
            "delete_memory",
            0.0,
            attributes={
                "gen_ai.operation.name": "delete_memory",
                "gen_ai.memory.store.id": "mem0",
                "gen_ai.memory.record.id": "dog",
            },
        )
    )
    response = send(client, delete, project)
    assert response.status_code == 409
    assert response.json()["details"] == [
        {"loc": ["units", "tombstone:mem0:dog"], "msg": "already names something different"}
    ]
    assert operations(neo4j_driver, project) == {}


def test_memtrace_operation_name_says_which_llm_step_a_span_is(
    client: httpx.Client, project: str, neo4j_driver: Driver
) -> None:
    named = {"gen_ai.operation.name": "chat", "memtrace.operation.name": "extract_facts"}
    request = export(
        span(30, 1, "chat gpt-4o-mini", 0.0, attributes=named),
        span(30, 2, "chat gpt-4o-mini", 1.0, attributes={"gen_ai.operation.name": "chat"}),
    )
    assert send(client, request, project).status_code == 200
    names = sorted(o["name"] for o in operations(neo4j_driver, project).values())
    assert names == ["chat gpt-4o-mini", "extract_facts"]


def decided(trace: int, turns: list[str], facts: list[str]) -> ExportTraceServiceRequest:
    """A Mem0 ``add`` with its deciding call traced, as an OpenAI instrumentation sends it: the
    call extracting ``facts`` from ``turns``, a search for memories like the first fact (none),
    the call deciding every fact's event, answering Mem0's JSON, and a write per fact."""
    decision = {"memory": [{"id": str(i), "text": f, "event": "ADD"} for i, f in enumerate(facts)]}
    prompt = f"Current memory:\n[]\nNew facts:\n{json.dumps(facts)}"
    writes = [
        span(
            trace,
            5 + i,
            "update_memory",
            0.5 + 0.01 * i,
            parent=1,
            attributes={
                "gen_ai.operation.name": "update_memory",
                "gen_ai.memory.store.id": "mem0",
                "gen_ai.memory.records": records((f"fact-{i}", fact)),
            },
        )
        for i, fact in enumerate(facts)
    ]
    return export(
        span(trace, 1, "mem0.add", 0.0),
        span(
            trace,
            2,
            "chat extract facts",
            0.1,
            parent=1,
            attributes={
                "gen_ai.operation.name": "chat",
                "gen_ai.input.messages": messages(*(("user", t) for t in turns)),
                "gen_ai.output.messages": messages(*(("assistant", f) for f in facts)),
            },
        ),
        span(
            trace,
            3,
            "search_memory",
            0.2,
            parent=1,
            attributes={
                "gen_ai.operation.name": "search_memory",
                "gen_ai.memory.store.id": "mem0",
                "gen_ai.memory.query.text": facts[0],
                "gen_ai.memory.records": records(),
            },
        ),
        span(
            trace,
            4,
            "chat decide memories",
            0.3,
            parent=1,
            attributes={
                "gen_ai.operation.name": "chat",
                "gen_ai.input.messages": messages(("user", prompt)),
                "gen_ai.output.messages": messages(("assistant", json.dumps(decision))),
            },
        ),
        *writes,
    )


def test_the_deciding_calls_prompt_is_not_the_evidence(client: httpx.Client, project: str) -> None:
    """Mem0's ``add`` with its deciding call traced, end to end: the call reads a prompt
    quoting every fact of the session and answers one JSON of them with their events. The case's
    evidence is the turn Alice said, never the prompt (assembled from the facts, not said,
    though it states the fact in the question's words), and the search that did not return the
    written memory is blamed. The data set's ``rewrite-otel-decisions`` shape is this at scale;
    tests/audits/test_audit_agreement.py and tests/attribution/test_copied_facts.py hold the
    two rules it needs."""
    facts = [
        "Alice is looking into volunteering at the animal shelter on weekends.",
        "Alice is building a reading corner for her future kids.",
        "Alice values friendship and compassion and is lucky to have friends and family "
        "helping with the move.",
        "Bob took his kids to the science museum and they loved the planets.",
        "Bob enjoys camping by the river with his family.",
    ]
    turns = [
        "Alice: I might volunteer at the animal shelter on weekends.",
        "Alice: I'm building a reading corner for my future kids.",
        "Alice: It showed me how much friendship and kindness matter, and how lucky I am to "
        "have my friends and family helping with the move.",
        "Bob: The kids loved the planets at the science museum!",
        "Bob: Camping by the river with the family is the best.",
    ]
    question = "What does Alice value?"
    expected = "friendship and compassion"
    ask = asked(61, question, ("fact-4", facts[4]), "Camping.", expected, "values")
    assert send(client, decided(60, turns, facts), project).status_code == 200
    assert send(client, ask, project).status_code == 200
    result = client.post("/attribute/values", params={"project": project}).json()
    print("RESULT", json.dumps(result, indent=1)[:4000])
    assert result["error_type"] == "RetrievalError", result["reason"]
    assert result["operation"]["id"] == f"otel:{61:032x}:{2:016x}"
