"""``MemTraceClient``: send trace batches to a MemTrace service, synchronously or with asyncio.

One call sends one batch and retries it while a retry can help (see ``memtrace_client.retry``).
For instrumenting a running pipeline use ``Tracer``, which batches in the background on top of
this client and never blocks or loses work when the service is away.
"""

from __future__ import annotations

import asyncio
import logging
import time
from types import TracebackType
from typing import Any, Self
from urllib.parse import quote

import httpx

from memtrace_client.errors import RejectedBatch, RejectedRequest, RequestFailed, ServiceUnavailable
from memtrace_client.models import IngestResult, TraceBatch, TraceCaseIn, Verdict, VerdictIn
from memtrace_client.prompts import Prompt, check_name
from memtrace_client.retry import (
    Backoff,
    is_retryable_status,
    retry_after_seconds,
)

Batch = TraceBatch | dict[str, Any]
log = logging.getLogger("memtrace_client")


class MemTraceClient:
    """A connection to one MemTrace service, for one project.

    ``transport`` / ``async_transport`` replace httpx's network transport (``httpx.MockTransport``
    in tests). ``attempts`` bounds the tries per batch; waits follow ``backoff`` and the server's
    ``Retry-After``.
    """

    def __init__(
        self,
        base_url: str = "http://127.0.0.1:8000",
        api_key: str | None = None,
        project: str = "default",
        *,
        timeout_s: float = 30.0,
        attempts: int = 5,
        backoff: Backoff | None = None,
        transport: httpx.BaseTransport | None = None,
        async_transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.project = project
        self.attempts = max(1, attempts)
        self.backoff = backoff or Backoff()
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._timeout = httpx.Timeout(timeout_s, connect=min(timeout_s, 5.0))
        self._transport = transport
        self._async_transport = async_transport
        self._http: httpx.Client | None = None
        self._ahttp: httpx.AsyncClient | None = None
        self._warned: set[str] = set()

    # -- batches ---------------------------------------------------------------------------------

    def batch(self, **parts: Any) -> TraceBatch:
        """A validated batch for this client's project (``units=``, ``operations=``, ``cases=``)."""
        return TraceBatch.model_validate({"project": self.project, **parts})

    def _payload(self, batch: Batch) -> dict[str, Any]:
        if isinstance(batch, TraceBatch):
            model = batch
        else:
            model = TraceBatch.model_validate({"project": self.project, **batch})
        payload: dict[str, Any] = model.model_dump(mode="json", exclude_defaults=True)
        payload["project"] = model.project
        return payload

    def send(self, batch: Batch) -> IngestResult:
        """POST one batch to ``/traces``; retries connection errors, 429 and 5xx.

        Raises ``RejectedBatch`` for any other 4xx and ``ServiceUnavailable`` when every attempt
        failed. A batch that landed before its response was lost is counted ``existing`` on retry.
        """
        return self.send_json(self._payload(batch))

    def send_json(self, payload: dict[str, Any], *, attempts: int | None = None) -> IngestResult:
        """Send an already serialized batch (what the background queue spools to disk)."""
        attempts = attempts or self.attempts
        for attempt in range(attempts):
            try:
                outcome: httpx.Response | httpx.TransportError = self._client().post(
                    "/traces", json=payload
                )
            except httpx.TransportError as e:
                outcome = e
            result, hint, last = _judge(outcome)
            if result is not None:
                return self._warn_once(result)
            if attempt + 1 < attempts:
                time.sleep(self.backoff.delay(attempt, hint))
        raise ServiceUnavailable(f"gave up after {attempts} attempts: {last}")

    async def asend(self, batch: Batch) -> IngestResult:
        """``send`` for asyncio code: same retries, awaits instead of sleeping."""
        payload = self._payload(batch)
        for attempt in range(self.attempts):
            try:
                outcome: httpx.Response | httpx.TransportError = await self._async_client().post(
                    "/traces", json=payload
                )
            except httpx.TransportError as e:
                outcome = e
            result, hint, last = _judge(outcome)
            if result is not None:
                return self._warn_once(result)
            if attempt + 1 < self.attempts:
                await asyncio.sleep(self.backoff.delay(attempt, hint))
        raise ServiceUnavailable(f"gave up after {self.attempts} attempts: {last}")

    def _warn_once(self, result: IngestResult) -> IngestResult:
        """Log each distinct warning of the service's answers once per client (a file of a
        thousand batches without a project says so once, not a thousand times)."""
        for warning in result.warnings:
            if warning not in self._warned:
                self._warned.add(warning)
                log.warning("memtrace: %s", warning)
        return result

    def send_verdict(
        self, case_id: str, verdict: VerdictIn, *, timeout_s: float | None = None
    ) -> dict[str, Any]:
        """POST a verdict on a stored case (``/cases/{case_id}/verdict``); the case as stored.

        Retries like ``send``; ``timeout_s`` bounds the whole call (requests and waits between
        them), else only ``attempts`` does. Raises ``RejectedRequest`` when refused (404: no such
        case in the project; 422: a bad verdict) and ``ServiceUnavailable`` when every attempt
        failed or the time ran out. Sending the same verdict again is harmless."""
        path = f"/cases/{quote(case_id, safe='')}/verdict"
        return self._post(path, verdict.model_dump(mode="json", exclude_none=True), timeout_s)

    def case_from_trace(
        self,
        case_id: str,
        trace_id: str | int,
        verdict: Verdict,
        expected_answer: str,
        *,
        question: str | None = None,
        timeout_s: float | None = None,
    ) -> dict[str, Any]:
        """Record a case on a trace already exported over OTLP (``POST /otlp/cases``), when the
        verdict comes after the trace was sent: the service finds the answer (the trace's last
        answering LLM call), the question (unless given) and the conversation in its spans.
        ``trace_id``: 32 hex digits, or OpenTelemetry's int (``span.get_span_context().trace_id``).

        Returns the service's answer (``case``, ``span_id``, ``conversation``, ``created``).
        Retries like ``send_verdict``; raises ``RejectedRequest`` when refused (404: the trace
        is not stored in the project, perhaps not exported yet; 422: no call of it answered;
        409: the case id holds another case) and ``ServiceUnavailable`` when every attempt
        failed. Sending the same case again is harmless."""
        body = TraceCaseIn(
            case_id=case_id,
            trace_id=f"{trace_id:032x}" if isinstance(trace_id, int) else trace_id,
            verdict=verdict,
            expected_answer=expected_answer,
            question=question,
        ).model_dump(mode="json", exclude_none=True)
        return self._post("/otlp/cases", body, timeout_s)

    def _post(self, path: str, body: dict[str, Any], timeout_s: float | None) -> dict[str, Any]:
        """POST ``body`` to ``path`` in this client's project; retried while a retry can help,
        within ``timeout_s`` in all when given. The JSON answer of a 200."""
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        last, tried = "no time left", 0
        for attempt in range(self.attempts):
            left = _left(deadline)
            if left is not None and left <= 0:
                break
            hint, tried = None, tried + 1
            try:
                response = self._client().post(
                    path,
                    params={"project": self.project},
                    json=body,
                    timeout=self._timeout if left is None else _shorter(self._timeout, left),
                )
            except httpx.TransportError as e:
                last = type(e).__name__
            else:
                if response.status_code == 200:
                    answer: dict[str, Any] = response.json()
                    return answer
                if not is_retryable_status(response.status_code):
                    raise RejectedRequest(response.status_code, _error_body(response))
                hint, last = retry_after_seconds(response), f"HTTP {response.status_code}"
            if attempt + 1 < self.attempts:
                wait = self.backoff.delay(attempt, hint)
                left = _left(deadline)
                if left is not None and wait >= left:
                    break  # the next attempt would start after the deadline
                time.sleep(wait)
        spent = "" if timeout_s is None else f" within {timeout_s:g} s"
        raise ServiceUnavailable(f"gave up{spent} after {tried} attempt(s): {last}")

    # -- prompts ---------------------------------------------------------------------------------

    def prompt(self, name: str) -> Prompt:
        """The newest version of prompt ``name`` in this project (``GET /prompts/{name}``), to
        run the next round with: pass it as ``prompt=`` to the Tracer so the operations consume
        that very version. Raises ``RequestFailed`` (404 when the project has no such prompt)."""
        response = self._client().get(
            f"/prompts/{check_name(name)}", params={"project": self.project}
        )
        if response.status_code != 200:
            try:
                body: Any = response.json()
            except ValueError:
                body = {"message": response.text[:500]}
            raise RequestFailed(response.status_code, body)
        latest = response.json()["versions"][-1]
        return Prompt(name, latest["text"], version=latest["label"])

    # -- connections -----------------------------------------------------------------------------

    def _client(self) -> httpx.Client:
        if self._http is None:
            self._http = httpx.Client(
                base_url=self.base_url,
                headers=self._headers,
                timeout=self._timeout,
                transport=self._transport,
            )
        return self._http

    def _async_client(self) -> httpx.AsyncClient:
        if self._ahttp is None:
            self._ahttp = httpx.AsyncClient(
                base_url=self.base_url,
                headers=self._headers,
                timeout=self._timeout,
                transport=self._async_transport,
            )
        return self._ahttp

    def close(self) -> None:
        if self._http is not None:
            self._http.close()
            self._http = None

    async def aclose(self) -> None:
        if self._ahttp is not None:
            await self._ahttp.aclose()
            self._ahttp = None
        self.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()


def _left(deadline: float | None) -> float | None:
    return None if deadline is None else deadline - time.monotonic()


def _shorter(timeout: httpx.Timeout, at_most_s: float) -> httpx.Timeout:
    """``timeout`` with every phase cut to ``at_most_s``."""

    def cut(value: float | None) -> float:
        return at_most_s if value is None else min(value, at_most_s)

    return httpx.Timeout(
        connect=cut(timeout.connect),
        read=cut(timeout.read),
        write=cut(timeout.write),
        pool=cut(timeout.pool),
    )


def _judge(
    outcome: httpx.Response | httpx.TransportError,
) -> tuple[IngestResult | None, float | None, str]:
    """One attempt: its result, or ``(None, retry hint, what failed)``; raises ``RejectedBatch``
    when retrying cannot help. Shared by the sync and async loops, which differ only in waiting."""
    if isinstance(outcome, httpx.TransportError):
        return None, None, type(outcome).__name__
    result, hint = _settle(outcome)
    return result, hint, f"HTTP {outcome.status_code}"


def _settle(response: httpx.Response) -> tuple[IngestResult | None, float | None]:
    """The result of a 200; ``(None, retry hint)`` for a retryable status; raises otherwise."""
    if response.status_code == 200:
        return IngestResult.model_validate(response.json()), None
    if is_retryable_status(response.status_code):
        return None, retry_after_seconds(response)
    raise RejectedBatch(response.status_code, _error_body(response))


def _error_body(response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        return {"message": response.text[:500]}
