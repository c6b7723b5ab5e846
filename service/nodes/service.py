"""Looking up a unit or an operation by id."""

from __future__ import annotations

from neo4j import AsyncSession

from service.errors import NotFound
from service.nodes import repository
from service.nodes.models import OperationView, UnitView


async def get_unit(session: AsyncSession, project: str, unit_id: str) -> UnitView:
    """The unit; ``NotFound`` when the project has none with this id."""
    row = await repository.read_node(session, project, unit_id, operation=False)
    if row is None:
        raise NotFound(f"no unit {unit_id!r} in project {project!r}")
    return UnitView(**row)


async def get_operation(session: AsyncSession, project: str, operation_id: str) -> OperationView:
    """The operation; ``NotFound`` when the project has none with this id."""
    row = await repository.read_node(session, project, operation_id, operation=True)
    if row is None:
        raise NotFound(f"no operation {operation_id!r} in project {project!r}")
    return OperationView(**row)
