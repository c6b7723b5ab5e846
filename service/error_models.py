"""The error body every error answer has (built in ``service.http_errors`` only; documented
for each route by ``service.error_responses.responses``)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class ErrorDetail(BaseModel):
    """One problem: where it is and what is wrong there (some carry one more key, such as
    ``type``, ``known``, ``supported`` or ``max_bytes``)."""

    model_config = ConfigDict(extra="allow")

    loc: list[str | int]
    msg: str


class ErrorBody(BaseModel):
    """``error`` is a stable code, ``message`` says what was wrong, ``details`` where."""

    error: str
    message: str
    details: list[ErrorDetail] | None = None
