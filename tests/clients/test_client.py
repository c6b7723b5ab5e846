"""The client distribution: retries, background batching, the spool, and the tracer.

The delivery tests put ``httpx.MockTransport`` where the network would be (the client's
injectable transport), so they can make the service refuse, fail or vanish on cue. The tracer
tests at the end send to the running service and look at what landed in Neo4j.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from memtrace_client import (
    Backoff,
    Delivery,
    MemTraceClient,
    RejectedBatch,
    ServiceUnavailable,
    Tracer,
)
from memtrace_client.spool import Spool
from neo4j import Driver

from tests.support.servers import ServiceHandle

NO_WAIT = Backoff(base_s=0.0, max_s=0.0, jitter=False)
OK = {"project": "p", "created": {}, "existing": {}}


class FakeService:
    """A scripted /traces: answers with ``status`` (or raises when ``down``), records batches."""

    def __init__(self) -> None:
        self.batches: list[dict[str, Any]] = []
        self.attempts = 0
        self.down = False
        self.status = 200
        self.headers: dict[str, str] = {}
        self.lock = threading.Lock()

    def __call__(self, request: httpx.Request) -> httpx.Response:
        with self.lock:
            self.attempts += 1
            if self.down:
                raise httpx.ConnectError("connection refused", request=request)
            if self.status != 200:
                body = {"error": "x", "message": f"status {self.status}", "details": None}
                return httpx.Response(self.status, json=body, headers=self.headers)
            self.batches.append(json.loads(request.content))
            return httpx.Response(200, json=OK)

    def ops(self) -> list[str]:
        return [op["id"] for b in self.batches for op in b.get("operations", [])]


def client_for(service: Callable[[httpx.Request], httpx.Response], **kw: Any) -> MemTraceClient:
    return MemTraceClient(
        "http://memtrace.test", project="p", transport=httpx.MockTransport(service), **kw
    )


def record_ops(tracer: Tracer, first: int, count: int) -> None:
    for i in range(first, first + count):
        tracer.record_operation(f"step-{i}", kind="other", id=f"op-{i:05d}")


# -- MemTraceClient ------------------------------------------------------------------------------


@pytest.mark.parametrize("status", [429, 500, 502, 503])
def test_send_retries_429_and_5xx_then_succeeds(status: int) -> None:
    answers = [httpx.Response(status, json={"message": "busy"})] * 2 + [
        httpx.Response(200, json=OK)
    ]
    seen: list[int] = []

    def service(request: httpx.Request) -> httpx.Response:
        seen.append(1)
        return answers[len(seen) - 1]

    result = client_for(service, backoff=NO_WAIT).send({"operations": []})
    assert result.project == "p"
    assert len(seen) == 3


def test_send_retries_connection_errors_and_gives_up_after_the_attempts() -> None:
    fake = FakeService()
    fake.down = True
    with pytest.raises(ServiceUnavailable, match="3 attempts: ConnectError"):
        client_for(fake, attempts=3, backoff=NO_WAIT).send({})
    assert fake.attempts == 3


@pytest.mark.parametrize("status", [400, 401, 403, 404, 409, 413, 422])
def test_send_does_not_retry_other_4xx(status: int) -> None:
    fake = FakeService()
    fake.status = status
    with pytest.raises(RejectedBatch) as caught:
        client_for(fake, backoff=NO_WAIT).send({})
    assert caught.value.status == status
    assert caught.value.body["message"] == f"status {status}"
    assert fake.attempts == 1


def test_send_waits_at_least_retry_after(monkeypatch: pytest.MonkeyPatch) -> None:
    slept: list[float] = []
    monkeypatch.setattr("memtrace_client.client.time.sleep", slept.append)
    answers = iter(
        [httpx.Response(503, headers={"Retry-After": "7"}), httpx.Response(200, json=OK)]
    )
    client_for(lambda _: next(answers), backoff=NO_WAIT).send({})
    assert slept == [7.0]


def test_backoff_grows_exponentially_up_to_its_cap() -> None:
    backoff = Backoff(base_s=0.5, max_s=4.0, jitter=False)
    assert [backoff.delay(n) for n in range(6)] == [0.5, 1.0, 2.0, 4.0, 4.0, 4.0]
    jittered = Backoff(base_s=0.5, max_s=4.0)
    assert all(0 <= jittered.delay(3) <= 4.0 for _ in range(100))


def test_send_validates_with_the_wire_models_before_sending() -> None:
    fake = FakeService()
    with pytest.raises(ValueError, match="kind"):
        client_for(fake).send({"units": [{"id": "u", "kind": "nonsense", "content": ""}]})
    assert fake.attempts == 0


def test_async_send_uses_the_same_rules() -> None:
    import asyncio

    statuses = iter([503, 200])

    async def handler(request: httpx.Request) -> httpx.Response:
        status = next(statuses)
        return httpx.Response(status, json=OK if status == 200 else {})

    async def main() -> str:
        async with MemTraceClient(
            "http://x", project="p", backoff=NO_WAIT, async_transport=httpx.MockTransport(handler)
        ) as client:
            return (await client.asend({"operations": []})).project

    assert asyncio.run(main()) == "p"


# -- background delivery -------------------------------------------------------------------------


def test_batches_close_at_max_items(tmp_path: Path) -> None:
    fake = FakeService()
    tracer = Tracer(client_for(fake), max_items=10, flush_interval_s=30, spool_dir=tmp_path)
    record_ops(tracer, 0, 35)
    assert tracer.flush(10)
    assert [len(b["operations"]) for b in fake.batches] == [10, 10, 10, 5]
    assert fake.ops() == [f"op-{i:05d}" for i in range(35)]
    tracer.close()


def test_batches_close_at_max_bytes(tmp_path: Path) -> None:
    fake = FakeService()
    tracer = Tracer(client_for(fake), max_bytes=2_000, flush_interval_s=30, spool_dir=tmp_path)
    for i in range(10):
        tracer.unit("message", "x" * 500, id=f"u{i}")
    assert tracer.flush(10)
    sizes = [len(b["units"]) for b in fake.batches]
    assert sum(sizes) == 10 and max(sizes) <= 4 and len(sizes) >= 3
    tracer.close()


def test_a_lone_record_is_sent_after_the_flush_interval(tmp_path: Path) -> None:
    fake = FakeService()
    tracer = Tracer(client_for(fake), flush_interval_s=0.2, spool_dir=tmp_path)
    record_ops(tracer, 0, 1)
    deadline = time.monotonic() + 5
    while not fake.batches and time.monotonic() < deadline:
        time.sleep(0.02)
    assert fake.ops() == ["op-00000"]  # without any flush() call
    tracer.close()


def test_service_down_spools_in_order_and_replays_when_it_returns(tmp_path: Path) -> None:
    fake = FakeService()
    fake.down = True
    tracer = Tracer(
        client_for(fake), max_items=5, flush_interval_s=0.05, spool_dir=tmp_path, backoff=NO_WAIT
    )
    record_ops(tracer, 0, 23)
    assert not tracer.flush(1.0)  # nothing can be delivered yet
    assert tracer.delivery.pending_batches >= 5
    fake.down = False
    record_ops(tracer, 23, 7)
    assert tracer.flush(10)
    assert fake.ops() == [f"op-{i:05d}" for i in range(30)]  # in recording order, once each
    assert tracer.delivery.pending_batches == 0
    tracer.close()


def test_spooled_batches_survive_a_restart_and_are_replayed_first(tmp_path: Path) -> None:
    fake = FakeService()
    fake.down = True
    first = Tracer(client_for(fake), max_items=4, flush_interval_s=0.05, spool_dir=tmp_path)
    record_ops(first, 0, 10)
    assert not first.close(timeout_s=0.5)  # the process ends with the service away
    assert len(list(tmp_path.glob("slot-*/*.json"))) == 3

    fake.down = False
    second = Tracer(client_for(fake), max_items=4, flush_interval_s=0.05, spool_dir=tmp_path)
    record_ops(second, 10, 3)
    assert second.flush(10)
    assert fake.ops() == [f"op-{i:05d}" for i in range(13)]
    second.close()
    assert not list(tmp_path.glob("slot-*/*.json"))


def test_a_new_process_adopts_the_spool_of_one_that_died(tmp_path: Path) -> None:
    held = Spool(tmp_path)  # slot-0, held by "another process" that stays alive
    orphan = tmp_path / "slot-7"
    orphan.mkdir()
    batch = {"project": "p", "operations": [{"id": "op-orphan"}]}
    (orphan / "000000000001.json").write_text(json.dumps(batch))

    fake = FakeService()
    tracer = Tracer(client_for(fake), spool_dir=tmp_path)
    assert tracer.delivery._spool.dir.name == "slot-1"  # type: ignore[union-attr]
    assert tracer.flush(10)
    assert fake.ops() == ["op-orphan"]
    tracer.close()
    held.close()


def test_a_refused_batch_is_kept_aside_and_does_not_block_the_rest(tmp_path: Path) -> None:
    fake = FakeService()
    fake.status = 422
    tracer = Tracer(client_for(fake), max_items=2, flush_interval_s=0.05, spool_dir=tmp_path)
    record_ops(tracer, 0, 2)
    refused = tracer.flush(5)
    assert not refused and refused.settled  # nothing waits, but not everything was stored
    [rejection] = refused.rejected
    assert rejection.reason.startswith("HTTP 422")
    assert [op["id"] for op in rejection.records["operations"]] == ["op-00000", "op-00001"]
    fake.status = 200
    record_ops(tracer, 2, 2)
    assert tracer.flush(5)  # refusals are reported once, by the flush after them
    assert fake.ops() == ["op-00002", "op-00003"]
    kept = list((tmp_path / "rejected").glob("*.json"))
    assert len(kept) == 1 and "op-00000" in kept[0].read_text()
    reason = kept[0].with_suffix(".reason.txt").read_text()
    assert reason.startswith("HTTP 422")
    assert tracer.delivery.stats.rejected_batches == 1
    tracer.close()


def test_429_and_503_are_retried_from_the_spool(tmp_path: Path) -> None:
    fake = FakeService()
    fake.status = 503
    fake.headers = {"Retry-After": "0"}
    tracer = Tracer(client_for(fake), flush_interval_s=0.05, spool_dir=tmp_path, backoff=NO_WAIT)
    record_ops(tracer, 0, 3)
    assert not tracer.flush(0.5)
    fake.status = 429
    assert not tracer.flush(0.3)
    fake.status = 200
    assert tracer.flush(5)
    assert fake.ops() == ["op-00000", "op-00001", "op-00002"]
    tracer.close()


def test_a_full_queue_drops_with_a_count_never_silently(tmp_path: Path) -> None:
    gate = threading.Event()

    def slow(request: httpx.Request) -> httpx.Response:
        gate.wait(5)
        return httpx.Response(200, json=OK)

    delivery = Delivery(
        client_for(slow), max_items=1, max_queue=2, enqueue_timeout_s=0.05, flush_interval_s=0
    )
    for i in range(6):
        delivery.put("operations", {"id": f"op-{i}", "name": "n", "kind": "other", "ts": "x"})
    assert delivery.stats.dropped_records >= 1
    gate.set()
    delivery.close()


# -- tracer against the running service ----------------------------------------------------------


def test_tracer_records_a_pipeline_into_neo4j(
    service: ServiceHandle, project: str, neo4j_driver: Driver, tmp_path: Path
) -> None:
    tracer = Tracer(
        MemTraceClient(service.url, project=project),
        system="toy-rag",
        session_id="s1",
        spool_dir=tmp_path,
    )
    turn = tracer.message("I adopted a cat named Miso in March.", role="user")
    with tracer.operation("extract_facts", kind="extraction", inputs=[turn], model="m") as op:
        fact = tracer.memory("The user adopted a cat named Miso in March.", memory_id="m1")
        op.output(fact)

    @tracer.traced("retrieve", kind="retrieval", top_k=1)
    def retrieve(query: Any, memories: list[Any]) -> Any:
        return tracer.context("\n".join(m.content for m in memories))

    question = tracer.query("What is the name of the user's cat?")
    context = retrieve(question, [fact])
    with tracer.operation("answer", kind="response", inputs=[question, context]) as op:
        answer = tracer.answer("The cat is called Tom.")
        op.output(answer)
    case_id = tracer.case("What is the cat's name?", "Miso", answer, "failed")
    with pytest.raises(ZeroDivisionError), tracer.operation("broken", kind="other"):
        _ = 1 / 0
    assert tracer.flush(30)
    tracer.close()

    rows = neo4j_driver.execute_query(
        "MATCH (o:Operation {project: $p}) "
        "OPTIONAL MATCH (o)-[c:CONSUMES]->(i) OPTIONAL MATCH (o)-[r:PRODUCES]->(x) "
        "RETURN o.name AS name, o.kind AS kind, o.system AS system, o.attributes AS attrs, "
        "count(DISTINCT i) AS ins, count(DISTINCT x) AS outs",
        p=project,
    ).records
    got = {r["name"]: (r["kind"], r["ins"], r["outs"]) for r in rows}
    assert got == {
        "extract_facts": ("extraction", 1, 1),
        "retrieve": ("retrieval", 2, 1),
        "answer": ("response", 2, 1),
        "broken": ("other", 0, 0),
    }
    assert {r["system"] for r in rows} == {"toy-rag"}
    broken = next(r for r in rows if r["name"] == "broken")
    assert json.loads(broken["attrs"])["error"] == "ZeroDivisionError"
    case = neo4j_driver.execute_query(
        "MATCH (c:Case {project: $p, id: $id})-[:ANSWERED_BY]->(a:Unit) "
        "RETURN c.verdict AS v, a.content AS a",
        p=project,
        id=case_id,
    ).records
    assert [(r["v"], r["a"]) for r in case] == [("failed", "The cat is called Tom.")]


def test_tracer_rejects_a_bad_unit_in_the_callers_code(tmp_path: Path) -> None:
    tracer = Tracer(client_for(FakeService()), spool_dir=tmp_path)
    with pytest.raises(ValueError, match="kind"):
        tracer.unit("nonsense", "x")  # type: ignore[arg-type]
    tracer.close()


def test_a_traced_function_returning_plain_text_records_it(
    service: ServiceHandle, neo4j_driver: Driver, project: str, tmp_path: Path
) -> None:
    """A retrieval that returns ``list[str]`` (no units) still has outputs: one context unit per
    text (they were dropped, and a case built on them came back inconclusive)."""
    tracer = Tracer(MemTraceClient(service.url, project=project), spool_dir=tmp_path)
    turn = tracer.message("My sister Emma lives in Denver.", role="user")
    with tracer.operation("extract", kind="extraction", inputs=[turn]) as op:
        fact = tracer.memory("Sister Emma lives in Denver", memory_id="m1")
        op.output(fact)

    @tracer.traced("search", kind="retrieval")
    def search(query: Any, memories: list[Any]) -> list[str]:
        return ["Likes hiking", "Has a dog"]  # the store returned other memories

    @tracer.traced("answer", kind="response")
    def answer(query: Any) -> str:
        return "I don't know"

    question = tracer.query("Where does Emma live?")
    texts = search(question, [fact])
    assert texts == ["Likes hiking", "Has a dog"]  # the caller gets its value back unchanged
    reply = answer(question)
    assert tracer.flush(30)
    rows = neo4j_driver.execute_query(
        "MATCH (o:Operation {project: $p})-[:PRODUCES]->(u:Unit) "
        "RETURN o.name AS op, u.kind AS kind, u.content AS content, u.id AS id ORDER BY content",
        p=project,
    ).records
    outputs = {(r["op"], r["kind"], r["content"]) for r in rows}
    assert ("search", "context", "Likes hiking") in outputs
    assert ("search", "context", "Has a dog") in outputs
    assert ("answer", "answer", reply) in outputs
    tracer.close()


def test_mask_runs_before_anything_leaves_the_process_and_tags_are_stamped(
    service: ServiceHandle, neo4j_driver: Driver, project: str, tmp_path: Path
) -> None:
    import re

    def mask(text: str) -> str:
        return re.sub(r"[\w.]+@[\w.]+", "<email>", text)

    tracer = Tracer(
        MemTraceClient(service.url, project=project),
        spool_dir=tmp_path,
        environment="prod",
        release="2026.11.3",
        mask=mask,
    )
    turn = tracer.message("Write to alice@example.com please", role="user")
    with tracer.operation("extract", kind="extraction", inputs=[turn]) as op:
        op.output(tracer.memory("Alice's e-mail is alice@example.com"))
    tracer.case("What is alice@example.com's name?", "alice@example.com", None, "unknown")
    assert tracer.flush(30)
    tracer.close()
    stored = neo4j_driver.execute_query(
        "MATCH (n {project: $p}) RETURN n.content AS c, n.question AS q, "
        "n.expected_answer AS e, n.attributes AS a",
        p=project,
    ).records
    texts = " ".join(str(v) for r in stored for v in r.values())
    assert "alice@example.com" not in texts
    assert "Write to <email> please" in texts
    [attrs] = [json.loads(r["a"]) for r in stored if r["a"] and "release" in r["a"]]
    assert attrs["environment"] == "prod" and attrs["release"] == "2026.11.3"
