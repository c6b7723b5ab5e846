"""``memtrace projects``, and the check that turns "nothing found" for a mistyped project into
"no such project"."""

from __future__ import annotations

from typing import Any

import httpx
from rich.table import Table

from cli.http import DEFAULT_PROJECT, DEFAULT_PROJECT_HINT, CommandError, checked


def list_projects(client: httpx.Client) -> list[dict[str, Any]]:
    """``GET /projects``: every project the CLI's key may see, with its counts."""
    result: list[dict[str, Any]] = checked(client.get("/projects"))
    return result


def require_project(client: httpx.Client, project: str) -> None:
    """Raise ``CommandError`` when ``project`` holds nothing the CLI's key can see: a project
    that does not exist reads as empty, which would otherwise look like "no failures"."""
    if project not in {p["project"] for p in list_projects(client)}:
        raise CommandError(no_such_project(project), usage=True)


def no_such_project(project: str) -> str:
    """Which project the command used and how to choose another."""
    if project == DEFAULT_PROJECT:
        return f"no such project {project!r}: {DEFAULT_PROJECT_HINT}"
    return f"no such project {project!r} (given with --project): `memtrace projects` lists them"


def projects_table(projects: list[dict[str, Any]]) -> Table:
    table = Table(
        "project",
        "operations",
        "units",
        "cases",
        "failed",
        "otlp warnings",
        "last activity",
        title="projects",
    )
    for p in projects:
        last = (p["last_activity"] or "-")[:19].replace("T", " ")
        table.add_row(
            p["project"],
            *(str(p[k]) for k in ("operations", "units", "cases", "failed_cases")),
            str(p.get("otlp_warnings", 0)),
            last,
        )
    return table
