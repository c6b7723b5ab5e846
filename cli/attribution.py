"""The CLI's attribution calls: attribute one case or every failed case, and the results table."""

from __future__ import annotations

from enum import StrEnum
from typing import Any
from urllib.parse import quote

import httpx
from rich.progress import track
from rich.table import Table

from cli.http import checked


class JudgeChoice(StrEnum):
    heuristic = "heuristic"
    llm = "llm"
    llm_all = "llm-all"


def llm_summary(results: list[dict[str, Any]]) -> list[str]:
    """For llm-judged results: how many rest on LLM verdicts, and the warnings of those that
    do not (the LLM gave nothing usable: they are the heuristic's)."""
    judged = [r for r in results if r.get("judge", {}).get("kind", "heuristic") != "heuristic"]
    if not judged:
        return []
    on_llm = sum(1 for r in judged if r["judge"].get("llm_verdicts", 0) > 0)
    calls = sum(r["judge"].get("llm_calls", 0) for r in judged)
    failures = sum(r["judge"].get("llm_failures", 0) for r in judged)
    lines = [
        f"{on_llm} of {len(judged)} results rest on LLM verdicts "
        f"({calls} LLM calls, {failures} gave nothing usable)"
    ]
    warned = [r for r in judged if r["judge"].get("warning")]
    lines += [f"  {r['case_id']}: {r['judge']['warning']}" for r in warned[:10]]
    if len(warned) > 10:
        lines.append(f"  ... and {len(warned) - 10} more")
    return lines


def failed_case_ids(client: httpx.Client, project: str) -> list[str]:
    """Every failed case of the project, paging through ``GET /cases``."""
    ids: list[str] = []
    while True:
        page = checked(
            client.get(
                "/cases",
                params={
                    "project": project,
                    "verdict": "failed",
                    "skip": len(ids),
                    "limit": 1000,
                },
            )
        )
        ids += [c["id"] for c in page]
        if len(page) < 1000:
            return ids


def attribute_cases(
    client: httpx.Client, project: str, case_id: str | None, judge: str | None, refresh: bool
) -> list[dict[str, Any]]:
    """Attribute one case, or every failed case when ``case_id`` is None (with progress).
    ``judge`` None: a stored result whatever its judge, else the service's default judge; a
    judge named is the one whose result comes back (the service attributes again if needed)."""
    ids = [case_id] if case_id else failed_case_ids(client, project)
    body: dict[str, Any] = {"refresh": refresh, **({"judge": judge} if judge else {})}
    params = {"project": project}
    steps = track(ids, description="attributing", transient=True) if len(ids) > 1 else ids
    return [
        checked(client.post(f"/attribute/{quote(cid, safe='')}", params=params, json=body))
        for cid in steps
    ]


def attribution_table(results: list[dict[str, Any]]) -> Table:
    """Attribution results as a table: the blamed operation by id, name and kind."""
    table = Table("case", "status", "error type", "operation", "name (kind)", "conf.", "reason")
    for r in results:
        op = r.get("operation") or {}
        table.add_row(
            r["case_id"],
            r["status"],
            r.get("error_type") or "-",
            op.get("id", "-"),
            f"{op['name']} ({op['kind']})" if op else "-",
            f"{r['confidence']:.2f}",
            r["reason"],
        )
    return table
