"""Response model of ``GET /projects``."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field


class ProjectSummary(BaseModel):
    """One project as a person picking it needs to see it."""

    project: str
    operations: int = 0
    units: int = Field(0, description="Units the project defines (not bare references).")
    cases: int = 0
    failed_cases: int = 0
    otlp_warnings: int = Field(
        0,
        description="Warnings and refusals its OTLP exports were given (GET /otlp/warnings "
        "lists the newest): an exporter drops a 200's warnings and only logs a refusal.",
    )
    last_activity: datetime | None = Field(
        None, description="The time of its newest operation or unit, when they carry one."
    )
    deleting: bool = Field(
        False,
        description="A DELETE /project started and has not finished: its reads answer 404 and "
        "its writes 409 until DELETE /project is run again to its end. The counts are what is "
        "left.",
    )
