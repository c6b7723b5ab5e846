"""Audits: read-only questions asked of a whole project, each a documented Cypher statement.

This module checks the audit's name and parameters against the registry
(``service.audits.catalogue``) and asks the repository for one page of rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from neo4j import AsyncSession

from service.audits.catalogue import AUDITS, AuditSpec
from service.audits.words import answer_needles
from service.errors import AuditNotFound, InvalidInput
from service.models.audits import AuditInfo, AuditPage, AuditParameter
from service.repository import audits

# Query parameters every audit takes; the route reads them itself.
COMMON_PARAMETERS = ("project", "skip", "limit")
_TRUE, _FALSE = {"true", "1", "yes"}, {"false", "0", "no"}


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


def _convert(param: AuditParameter, text: str) -> tuple[Any, str | None]:
    """(value, None), or (None, what is wrong with ``text``)."""
    value: Any = text
    if param.type == "int":
        try:
            value = int(text)
        except ValueError:
            return None, f"must be an integer, not {text[:40]!r}"
        if param.minimum is not None and value < param.minimum:
            return None, f"must be at least {param.minimum}"
        if param.maximum is not None and value > param.maximum:
            return None, f"must be at most {param.maximum}"
    elif param.type == "bool":
        if text.lower() not in _TRUE | _FALSE:
            return None, "must be true or false"
        value = text.lower() in _TRUE
    elif param.choices is not None and text not in param.choices:
        return None, f"must be one of {', '.join(param.choices)}"
    return value, None


def parse_parameters(spec: AuditSpec, given: Sequence[tuple[str, str]]) -> dict[str, Any]:
    """The audit's parameters from the query string's ``(name, value)`` pairs, defaults filled
    in. Every unknown, repeated or malformed one is reported at once (``InvalidInput``)."""
    declared = {p.name: p for p in spec.info.parameters}
    values: dict[str, Any] = {p.name: p.default for p in spec.info.parameters}
    problems: list[dict[str, Any]] = []
    seen: set[str] = set()
    for name, text in given:
        param = declared.get(name)
        if param is None:
            takes = ", ".join([*declared, *COMMON_PARAMETERS])
            msg = f"audit {spec.name!r} takes no parameter {name!r}; it takes {takes}"
        elif name in seen:
            msg = "given more than once"
        else:
            values[name], msg = _convert(param, text)  # type: ignore[assignment]
        seen.add(name)
        if msg is not None:
            problems.append({"loc": ["query", name], "msg": msg, "type": "audit_parameter"})
    if problems:
        names = ", ".join(sorted({str(p["loc"][1]) for p in problems}))
        raise InvalidInput(f"bad parameter(s) for audit {spec.name!r}: {names}", details=problems)
    return values


async def run_audit(
    session: AsyncSession,
    project: str,
    name: str,
    given: Sequence[tuple[str, str]],
    skip: int,
    limit: int,
    candidate_scan: int,
) -> AuditPage:
    """One page of the audit's rows for ``project``; 404 for an unknown audit, 422 for a bad
    parameter (both before Neo4j is asked anything)."""
    spec = get_spec(name)
    params = parse_parameters(spec, given)
    statement_params = {**params, "project": project}
    if spec.answer_needles:
        statement_params["needles"] = await _needles(session, project, params)
    rows, next_skip = await audits.audit_page(
        session, spec.statement, statement_params, skip, limit, spec.keep, candidate_scan
    )
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


async def _needles(
    session: AsyncSession, project: str, params: dict[str, Any]
) -> dict[str, list[str]] | None:
    """Per failed case, the stems of its expected answer, for the Cypher pre-filter of
    ``min_answer_coverage``; None when that is 0 (every structural candidate is reported)."""
    if params["min_answer_coverage"] == 0:
        return None
    answers = await audits.failed_case_answers(session, project)
    return {case_id: answer_needles(text) for case_id, text in answers.items()}
