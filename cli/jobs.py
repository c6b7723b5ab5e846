"""The CLI's calls to ``/attribution-jobs``: start or resume a job, follow it with a progress
bar, stop it on Ctrl-C, and read its results."""

from __future__ import annotations

import time
from typing import Any

import httpx
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from cli.http import checked

POLL_S = 0.5


def start_job(client: httpx.Client, project: str, judge: str, refresh: bool) -> dict[str, Any]:
    """Start a job over every failed case of ``project``."""
    body = {"judge": judge, "refresh": refresh}
    response = client.post("/attribution-jobs", params={"project": project}, json=body)
    return checked(response)  # type: ignore[no-any-return]


def resume_job(client: httpx.Client, project: str, job_id: str) -> dict[str, Any]:
    """Resume a stopped or interrupted job."""
    response = client.post(f"/attribution-jobs/{job_id}/resume", params={"project": project})
    return checked(response)  # type: ignore[no-any-return]


RESULT_COUNTS = (
    ("attributed", "attributed"),
    ("inconclusive", "inconclusive"),
    ("unanswerable", "unanswerable"),
    ("not_failed", "not failed"),
)
"""A job's stored results by status (its fields, their labels), apart as a report's totals
count them: an unanswerable result is not an attributed one."""


def _result_counts(job: dict[str, Any]) -> list[tuple[str, int]]:
    """(label, count) of the job's results by status; 'not failed' only when there is one (a
    job covers cases that were failed when it started)."""
    counts = [(label, int(job.get(key, 0))) for key, label in RESULT_COUNTS]
    return [(label, n) for label, n in counts if n or label != "not failed"]


def progress_line(job: dict[str, Any]) -> str:
    results = ", ".join(f"{n} {label}" for label, n in _result_counts(job))
    line = (
        f"{job['done']} of {job['total']} cases done: {results}, "
        f"{job['skipped']} skipped, {job['failed']} failed"
    )
    if job.get("judge", "heuristic") != "heuristic":
        line += f"; {job.get('on_llm', 0)} of the results rest on LLM verdicts"
    return line


def follow_job(
    client: httpx.Client, project: str, job: dict[str, Any], console: Console
) -> dict[str, Any]:
    """Show the job's progress until it is no longer running; the job as it ended.

    Ctrl-C stops the job (what it stored is kept) and re-raises ``KeyboardInterrupt``.
    """
    path = f"/attribution-jobs/{job['id']}"
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("cases"),
        TimeElapsedColumn(),
    )
    try:
        with Progress(*columns, console=console, transient=True) as bar:
            task = bar.add_task("attributing", total=job["total"])
            while job["status"] == "running":
                time.sleep(POLL_S)
                job = checked(client.get(path, params={"project": project}))
                failed = f"attributing ({job['failed']} failed)"
                bar.update(task, completed=job["done"], description=failed)
    except KeyboardInterrupt:
        checked(client.post(f"{path}/stop", params={"project": project}))
        raise
    return job


def job_results(client: httpx.Client, project: str, job_id: str) -> list[dict[str, Any]]:
    """Every stored attribution of the job's cases, in case id order."""
    results: list[dict[str, Any]] = []
    while True:
        page = checked(
            client.get(
                f"/attribution-jobs/{job_id}/results",
                params={"project": project, "skip": len(results), "limit": 1000},
            )
        )
        results += page
        if len(page) < 1000:
            return results


def list_jobs(client: httpx.Client, project: str, limit: int) -> list[dict[str, Any]]:
    """The project's newest attribution jobs (at most ``limit``, up to 100)."""
    params: dict[str, str | int] = {"project": project, "limit": limit}
    jobs: list[dict[str, Any]] = checked(client.get("/attribution-jobs", params=params))
    return jobs


def jobs_table(jobs: list[dict[str, Any]], project: str) -> Table:
    table = Table(
        "job",
        "status",
        "judge",
        "done",
        *(label for _, label in RESULT_COUNTS),
        "skipped",
        "failed",
        "started",
        title=f"attribution jobs of {project!r}, newest first",
    )
    for job in jobs:
        table.add_row(
            job["id"],
            job["status"],
            job["judge"],
            f"{job['done']}/{job['total']}",
            *(str(job.get(k, 0)) for k, _ in RESULT_COUNTS),
            *(str(job[k]) for k in ("skipped", "failed")),
            job["created_at"][:19].replace("T", " "),
        )
    return table


__all__ = [
    "follow_job",
    "job_results",
    "jobs_table",
    "list_jobs",
    "progress_line",
    "resume_job",
    "start_job",
]
