"""The one error hierarchy of MemTrace. ``service.http_errors`` maps it to HTTP in one place.

Every error answers ``{"error": code, "message": text, "details": list or null}``. ``details``
has one shape everywhere: a list of ``{"loc": [...], "msg": "..."}``, one item per problem,
``loc`` the path to where it is (``["body", "units", 3, "kind"]``, ``["query", "project"]``,
``["units", "<id>"]`` for a 409's conflicting id, ``["header", "content-type"]``) and ``msg``
what is wrong there. An item may carry one more key a program can use (``type`` of a validation
error, ``known`` audits, ``supported`` values, ``max_bytes``, ``neo4j_code``, ``job``).

MemTraceError
├── MalformedRequest       400  the body cannot be decoded (not protobuf, not JSON, bad gzip)
├── QueryRefused           400  an ad-hoc Cypher query that writes or reads beyond its project
├── QueryFailed            422  a query Neo4j stopped (timeout, memory): not a 503, not retried
│   └── ReadTimedOut            an audit's, a report's or a session's reads ran past their budget
├── Unauthorized           401  no API key, or an unknown one (API keys are configured)
├── Forbidden              403  the API key is not bound to the project asked for
├── InvalidInput           422  the request is well-formed JSON but breaks a rule
├── PayloadTooLarge        413  a batch over the configured size limits
├── UnsupportedMediaType   415  a Content-Type or Content-Encoding the endpoint does not read
├── NotFound               404
│   ├── CaseNotFound
│   ├── SessionNotFound
│   ├── AuditNotFound
│   └── ProjectGone               a read of a project being deleted
├── Conflict               409  an id already names something different
│   └── ProjectBeingDeleted       a write to a project being deleted
├── UpstreamFailed         502  the LLM endpoint refused or failed (prompt optimisation)
│   └── LLMEndpointRefused        it answered 401/403/404: its URL, key or model is wrong
└── RetryableError
    ├── StoreUnavailable   503  Neo4j did not answer; retry after a while
    ├── ConcurrentChange   503  concurrent writes kept changing what this request writes
    └── LLMNotReady        503  /readyz: the configured LLM endpoint refuses us
"""

from __future__ import annotations

from typing import Any

Details = list[dict[str, Any]]
"""``[{"loc": [...], "msg": "...", ...}]``: where each problem is and what it is."""


class MemTraceError(Exception):
    """Root of every error MemTrace raises on purpose."""

    status_code = 500
    code = "internal_error"

    def __init__(self, message: str, *, details: Details | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.details = details


class MalformedRequest(MemTraceError):
    """The body cannot be decoded at all; ``details`` says where decoding failed."""

    status_code = 400
    code = "malformed_request"


class InvalidInput(MemTraceError):
    """The request breaks a rule of the wire format; ``details`` lists every bad item."""

    status_code = 422
    code = "invalid_input"


class PayloadTooLarge(MemTraceError):
    """A batch over the byte or operation limit."""

    status_code = 413
    code = "payload_too_large"


class UnsupportedMediaType(MemTraceError):
    """A body in a format (or compression) the endpoint does not read; ``details`` lists those."""

    status_code = 415
    code = "unsupported_media_type"


class NotFound(MemTraceError):
    """Something named in the request does not exist in this project."""

    status_code = 404
    code = "not_found"


class CaseNotFound(NotFound):
    """No case with this id in this project."""


class SessionNotFound(NotFound):
    """No operation or unit of this project names this session (``GET /sessions/{id}``)."""


class TraceNotFound(NotFound):
    """No span of this trace is stored in this project."""


class ProjectNotFound(NotFound):
    """A console page of a project that holds nothing (a mistyped name)."""


class AuditNotFound(NotFound):
    """No audit with this name; ``details`` lists the known ones."""


def _deletion_unfinished() -> Details:
    return [{"loc": ["query", "project"], "msg": "being deleted: DELETE /project finishes it"}]


class ProjectGone(NotFound):
    """A read of a project whose deletion started and has not finished: it reads as gone."""

    code = "project_being_deleted"

    def __init__(self, project: str) -> None:
        super().__init__(
            f"project {project!r} is being deleted; run DELETE /project again to finish",
            details=_deletion_unfinished(),
        )


class QueryRefused(MemTraceError):
    """``POST /cypher`` will not run the query; ``details`` lists every reason."""

    status_code = 400
    code = "query_refused"


class Unauthorized(MemTraceError):
    """API keys are configured and the request carries no valid ``Authorization: Bearer`` key."""

    status_code = 401
    code = "unauthorized"


class Forbidden(MemTraceError):
    """The API key is valid but not bound to the project the request names."""

    status_code = 403
    code = "forbidden"


class Conflict(MemTraceError):
    """An id already names a unit, operation or case with other content; ``details`` has the ids."""

    status_code = 409
    code = "conflict"


class ProjectBeingDeleted(Conflict):
    """A write to a project whose deletion started and has not finished: refused until it has."""

    code = "project_being_deleted"

    def __init__(self, project: str) -> None:
        super().__init__(
            f"project {project!r} is being deleted; writes are refused until DELETE /project "
            "has finished (run it again if it stopped)",
            details=_deletion_unfinished(),
        )


class UpstreamFailed(MemTraceError):
    """The configured LLM endpoint refused a request (wrong key, model or URL) or answered
    something unusable; retrying the same request cannot help until its settings change."""

    status_code = 502
    code = "llm_failed"


class LLMEndpointRefused(UpstreamFailed):
    """The LLM endpoint answered 401, 403 or 404: its URL, key or model is wrong. Said at once
    (an llm judge's attribution, ``/readyz``), never turned into heuristic results quietly."""

    code = "llm_endpoint_refused"


class RetryableError(MemTraceError):
    """A transient failure: the same request may succeed later."""

    status_code = 503
    code = "unavailable"


class LLMNotReady(RetryableError):
    """``/readyz`` while the configured LLM endpoint refuses the service's requests."""

    code = "llm_endpoint_refused"


class StoreUnavailable(RetryableError):
    """Neo4j could not be reached or did not answer in time."""


class ConcurrentChange(RetryableError):
    """Concurrent transactions kept changing what this request writes (a deletion removing the
    units a batch refers to, writers deadlocking) through every rerun; sending the same request
    again is safe. ``details`` names the ids when they are known."""

    code = "concurrent_change"


class QueryFailed(MemTraceError):
    """A query Neo4j started but stopped (timed out, out of memory, failed while running): the
    query is at fault, not the store, so it is no 503 and has no Retry-After."""

    status_code = 422
    code = "query_failed"


class ReadTimedOut(QueryFailed):
    """The service's own reads for one request (an audit page, a report) ran past their time
    budget and were stopped; the message names what ran and ``details`` how to narrow it."""
