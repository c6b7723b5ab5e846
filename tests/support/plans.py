"""Neo4j's own profile of a statement from ``cypher/``: what the tests of a read's cost inspect."""

from __future__ import annotations

from typing import Any

from neo4j import Driver

from cypher import query


def operators(plan: Any) -> list[Any]:
    """Every operator of a profiled plan, the plan's own first, as Neo4j reports them."""
    return [plan, *(op for child in plan.get("children", []) for op in operators(child))]


def profiled(driver: Driver, statement: str, **params: Any) -> tuple[list[Any], list[Any]]:
    """The operators of ``statement`` run under PROFILE with ``params``, and its records."""
    with driver.session() as session:
        result = session.run("PROFILE " + query(statement), **params)
        records = list(result)
        return operators(result.consume().profile), records
