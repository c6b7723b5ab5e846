"""HTTP calls ``memtrace audit`` makes to a running service, and the tables it prints."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import httpx
from rich.table import Table

from cli.http import checked


def _get(client: httpx.Client, path: str, params: Sequence[tuple[str, str | int]]) -> Any:
    return checked(client.get(path, params=list(params)))


def parse_params(pairs: Sequence[str]) -> list[tuple[str, str]]:
    """``--param k=v`` options as (k, v); ``ValueError`` naming the first malformed one."""
    parsed = []
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"--param {pair!r} is not of the form NAME=VALUE")
        parsed.append((key.strip(), value))
    return parsed


def list_audits(client: httpx.Client) -> list[dict[str, Any]]:
    """``GET /audits``: every audit the service knows."""
    result: list[dict[str, Any]] = _get(client, "/audits", [])
    return result


def run_audit(
    client: httpx.Client,
    name: str,
    project: str,
    params: Sequence[tuple[str, str]],
    skip: int,
    limit: int,
    cursor: str | None = None,
) -> dict[str, Any]:
    """``GET /audits/{name}``: one page of rows (``rows``, ``columns``, ``next_skip`` or
    ``next_cursor``). ``skip`` is sent only when not 0: the cursor-paged audits refuse one."""
    query: list[tuple[str, str | int]] = [("project", project), ("limit", limit)]
    query += [("skip", skip)] if skip else []
    query += [("cursor", cursor)] if cursor is not None else []
    page: dict[str, Any] = _get(client, f"/audits/{name}", [*query, *params])
    return page


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, list):
        return ", ".join(_cell(v) for v in value) or "-"
    return str(value)


def audits_table(audits: list[dict[str, Any]]) -> Table:
    """The audit catalogue: name, what it reports, its parameters with defaults."""
    table = Table("audit", "reports", "parameters (default)", title="audits")
    for audit in audits:
        params = ", ".join(
            f"{p['name']}: {p['type']} ({_cell(p['default'])})" for p in audit["parameters"]
        )
        table.add_row(audit["name"], audit["description"], params or "-")
    return table


def rows_table(page: dict[str, Any]) -> Table:
    """One page of an audit's rows, one column per declared column."""
    shown = len(page["rows"])
    more = f"; more with --skip {page['next_skip']}" if page["next_skip"] is not None else ""
    if page.get("next_cursor"):
        more = f"; more with --cursor {page['next_cursor']}"
    table = Table(
        *page["columns"],
        title=f"{page['audit']} in project {page['project']!r}: {shown} row(s){more}",
    )
    for row in page["rows"]:
        table.add_row(*(_cell(row.get(c)) for c in page["columns"]))
    return table
