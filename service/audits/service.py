"""Audits: read-only questions asked of a whole project, each a documented Cypher statement.

This module checks the audit's name and parameters against the catalogue
(``service.audits.catalogue``) and asks the repository for one page of rows, within one time
budget for every read the page needs (``MEMTRACE_AUDIT_TIMEOUT_S``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from neo4j import AsyncSession

from service.audits import cursor as cursors
from service.audits import repository as audits
from service.audits.catalogue import AUDITS
from service.audits.models import AuditInfo, AuditPage
from service.audits.parameters import parse_parameters
from service.audits.spec import AuditSpec
from service.audits.words import answer_needles
from service.errors import AuditNotFound, InvalidInput, ReadTimedOut
from service.read_budget import Deadline


def list_audits() -> list[AuditInfo]:
    """Every audit, by name."""
    return [AUDITS[name].info for name in sorted(AUDITS)]


def get_spec(name: str) -> AuditSpec:
    """The audit called ``name``; ``AuditNotFound`` naming the known ones otherwise."""
    spec = AUDITS.get(name)
    if spec is None:
        known = sorted(AUDITS)
        raise AuditNotFound(
            f"no audit named {name!r}; known audits: {', '.join(known)}",
            details=[{"loc": ["path", "name"], "msg": "no such audit", "known": known}],
        )
    return spec


async def run_audit(
    session: AsyncSession,
    project: str,
    name: str,
    given: Sequence[tuple[str, str]],
    skip: int,
    limit: int,
    candidate_scan: int,
    budget_s: float,
    cursor: str | None = None,
    cursor_cases: int = 500,
) -> AuditPage:
    """One page of the audit's rows for ``project``; 404 for an unknown audit, 422 for a bad
    parameter (both before Neo4j is asked anything); ``ReadTimedOut`` (422) naming the audit and
    how to narrow it when its reads take longer than ``budget_s`` seconds together.
    ``session`` must be a read-access session."""
    spec = get_spec(name)
    params = parse_parameters(spec, given)
    if not spec.cursor_paged and cursor is not None:
        raise InvalidInput(
            f"audit {name!r} pages with skip and next_skip, not with a cursor",
            details=[{"loc": ["query", "cursor"], "msg": "this audit takes skip"}],
        )
    statement_params = {**params, "project": project}
    deadline = Deadline.starting_now(budget_s)
    if spec.cursor_paged:
        return await _cursor_page(
            session,
            project,
            spec,
            params,
            skip,
            cursor,
            limit,
            candidate_scan,
            cursor_cases,
            budget_s,
        )
    try:
        if spec.answer_needles:
            statement_params["needles"] = await _needles(session, deadline, project, params)
        rows, next_skip = await audits.audit_page(
            session,
            deadline,
            spec.statement,
            statement_params,
            skip,
            limit,
            spec.keep,
            candidate_scan,
        )
    except ReadTimedOut as e:
        raise _too_long(spec, limit, budget_s) from e
    columns = [c.name for c in spec.info.columns]
    return AuditPage(
        audit=name,
        project=project,
        parameters=params,
        skip=skip,
        limit=limit,
        columns=columns,
        rows=[{c: row.get(c) for c in columns} for row in rows],
        next_skip=next_skip,
    )


async def _cursor_page(
    session: AsyncSession,
    project: str,
    spec: AuditSpec,
    params: dict[str, Any],
    skip: int,
    cursor: str | None,
    limit: int,
    candidate_scan: int,
    cursor_cases: int,
    budget_s: float,
) -> AuditPage:
    """One page of an audit paged by a cursor over the failed cases: it reads the next
    ``cursor_cases`` failed cases from the cursor (their expected answers give the needles),
    then the candidates of those cases only, so a page costs the same wherever it starts."""
    if skip:
        raise InvalidInput(
            f"audit {spec.name!r} pages with a cursor, not skip: a far skip would walk every "
            "failed case before it; pass the page's next_cursor as cursor",
            details=[{"loc": ["query", "skip"], "msg": "use cursor (next_cursor) instead"}],
        )
    start = cursors.decode(cursor, spec.name, params)
    deadline = Deadline.starting_now(budget_s)
    try:
        answers = await audits.failed_cases_from(
            session, deadline, project, start.case, cursor_cases + 1
        )
        ids = list(answers)
        window = ids[:cursor_cases]
        after = ids[cursor_cases] if len(ids) > cursor_cases else None
        statement_params: dict[str, Any] = {**params, "project": project}
        if spec.answer_needles:
            statement_params["needles"] = (
                {i: answer_needles(answers[i]) for i in window}
                if params["min_answer_coverage"]
                else None
            )
        rows, following = await audits.cursor_page(
            session,
            deadline,
            spec.statement,
            statement_params,
            start,
            window,
            after,
            limit,
            spec.keep,
            candidate_scan,
        )
    except ReadTimedOut as e:
        raise _too_long(spec, limit, budget_s) from e
    columns = [c.name for c in spec.info.columns]
    return AuditPage(
        audit=spec.name,
        project=project,
        parameters=params,
        skip=0,
        limit=limit,
        columns=columns,
        rows=[{c: row.get(c) for c in columns} for row in rows],
        next_skip=None,
        next_cursor=cursors.encode(spec.name, params, following) if following else None,
    )


def _too_long(spec: AuditSpec, limit: int, budget_s: float) -> ReadTimedOut:
    """What to tell a caller whose page ran out of time: which audit, and what narrows it."""
    how = "cursor" if spec.cursor_paged else "skip"
    fewer = f"ask for fewer rows than {limit}, then page on with {how}"
    details: list[dict[str, Any]] = [{"loc": ["query", "limit"], "msg": fewer}]
    details += [
        {"loc": ["query", p.name], "msg": f"narrows the audit to one {p.name}"}
        for p in spec.info.parameters
        if p.choices
    ]
    scans = " (a page of this audit reads candidates until it has its rows)" if spec.keep else ""
    return ReadTimedOut(
        f"audit {spec.name!r} ran longer than its time budget of {budget_s:g} s and was "
        f"stopped{scans}; ask for a smaller page (limit, now {limit}) and go on from "
        f"next_{how}",
        details=details,
    )


async def _needles(
    session: AsyncSession, deadline: Deadline, project: str, params: dict[str, Any]
) -> dict[str, list[str]] | None:
    """Per failed case, the stems of its expected answer, for the Cypher pre-filter of
    ``min_answer_coverage``; None when that is 0 (every structural candidate is reported)."""
    if params["min_answer_coverage"] == 0:
        return None
    answers = await audits.failed_case_answers(session, deadline, project)
    return {case_id: answer_needles(text) for case_id, text in answers.items()}
