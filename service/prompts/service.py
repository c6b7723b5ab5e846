"""Prompt versions of a project and how each fared (``GET /prompts``, ``GET /prompts/{name}``).

Versions are numbered per name by first use (the earliest operation that consumed or produced
the version; ties by id), so ``name@1`` is the version the project ran first. A version never
used by any operation (sent as a bare unit) sorts last, by id.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import UTC, datetime

from neo4j import AsyncSession

from graph_schema.prompts import check_name, placeholders
from service.errors import InvalidInput, NotFound
from service.prompts import repository as repo
from service.prompts.models import (
    PromptDetail,
    PromptSummary,
    PromptVersion,
    PromptVersionSummary,
)
from service.prompts.repository import VersionRow
from service.read_budget import Deadline

_LAST = datetime.max.replace(tzinfo=UTC)


def _ordered(rows: list[VersionRow]) -> dict[str, list[VersionRow]]:
    by_name: dict[str, list[VersionRow]] = defaultdict(list)
    for row in rows:
        by_name[row.name].append(row)
    for versions in by_name.values():
        versions.sort(key=lambda r: (r.first_used or _LAST, r.id))
    return dict(sorted(by_name.items()))


def _summary(row: VersionRow, number: int) -> dict[str, object]:
    failures = sum(row.failures.values())
    return {
        "id": row.id,
        "label": f"{row.name}@{number}",
        "version": number,
        "hash": row.hash,
        "first_used": row.first_used,
        "operations": row.operations,
        "failures": failures,
        "failures_by_error_type": dict(sorted(row.failures.items())),
        "failure_rate": round(failures / row.operations, 4) if row.operations else None,
    }


def _checked(name: str) -> str:
    try:
        return check_name(name)
    except ValueError as e:
        raise InvalidInput(str(e), details=[{"loc": ["path", "name"], "msg": str(e)}]) from None


async def list_prompts(
    session: AsyncSession, project: str, deadline: Deadline | None = None
) -> list[PromptSummary]:
    """Every prompt of the project, by name, each with its versions oldest first (read within
    ``deadline`` when given)."""
    rows = await repo.versions(session, project, None, with_text=False, deadline=deadline)
    return [
        PromptSummary(
            name=name,
            latest=f"{name}@{len(versions)}",
            versions=[
                PromptVersionSummary.model_validate(_summary(r, i))
                for i, r in enumerate(versions, 1)
            ],
        )
        for name, versions in _ordered(rows).items()
    ]


async def get_prompt(session: AsyncSession, project: str, name: str) -> PromptDetail:
    """Prompt ``name`` with every version's text and lineage; ``NotFound`` when it has none."""
    rows = await repo.versions(session, project, _checked(name), with_text=True)
    if not rows:
        raise NotFound(
            f"no prompt {name!r} in project {project!r}",
            details=[{"loc": ["path", "name"], "msg": "not found"}],
        )
    versions = _ordered(rows)[name]
    return PromptDetail(
        name=name,
        latest=f"{name}@{len(versions)}",
        versions=[
            PromptVersion.model_validate(
                {
                    **_summary(r, i),
                    "text": r.text or "",
                    "placeholders": placeholders(r.text or ""),
                    "parent": r.parent,
                    "produced_by": r.produced_by,
                    "motivated_by": r.motivated_by,
                    "forced": r.forced,
                }
            )
            for i, r in enumerate(versions, 1)
        ],
    )


async def labels(session: AsyncSession, project: str) -> dict[str, str]:
    """``name@n`` of every prompt version of the project, by version id."""
    rows = await repo.versions(session, project, None, with_text=False)
    return {
        r.id: f"{name}@{i}"
        for name, versions in _ordered(rows).items()
        for i, r in enumerate(versions, 1)
    }


async def version_rates(
    session: AsyncSession, project: str, deadline: Deadline
) -> list[PromptVersionSummary]:
    """Every version of every prompt, in name order then version order (the report's table),
    read within the report's ``deadline``."""
    prompts = await list_prompts(session, project, deadline)
    return [v for prompt in prompts for v in prompt.versions]
