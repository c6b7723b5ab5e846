"""graph_schema names every label, relationship type, constraint and index the Cypher catalogue
uses (graph_schema/labels.py), so the graph's shape is read in one place."""

from __future__ import annotations

import re

import pytest

from cypher import names, query
from graph_schema.labels import CONSTRAINTS, EDGE_TYPES, INDEXES, NODE_LABELS

_STRING = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"")
_LABEL = re.compile(r"\(\s*\w*\s*((?::\s*[A-Z]\w*\s*)+)")
_TYPES = re.compile(r"\[\s*\w*\s*:\s*([A-Z_][A-Z_|:\s]*)")
_SCHEMA = re.compile(r"CREATE (CONSTRAINT|INDEX) (\w+) IF NOT EXISTS")
SERVICE_STATEMENTS = [name for name in names() if not name.startswith("benchmarks/")]
"""The service's statements: those in cypher/benchmarks/ write a benchmark's graph of its own
(the minimal graph an ingest limit is measured by), under labels the service never reads."""


def _code(name: str) -> str:
    """The statement without its comments and string literals."""
    lines = [line.split("//", 1)[0] for line in query(name).splitlines()]
    return _STRING.sub("''", "\n".join(lines))


def used(text: str) -> tuple[set[str], set[str]]:
    """(labels, relationship types) a statement's text names."""
    labels = {
        label.strip()
        for found in _LABEL.findall(text)
        for label in found.split(":")
        if label.strip()
    }
    types = {
        kind.strip(" :")
        for found in _TYPES.findall(text)
        for kind in found.split("|")
        if kind.strip(" :")
    }
    return labels, types


def test_the_reader_finds_labels_and_types() -> None:
    text = (
        "MATCH (c:Case {id: $id})-[:ANSWERED_BY]->(u:Unit)<-[r:CONSUMES|PRODUCES*0..]-(:Operation)"
    )
    assert used(text) == ({"Case", "Unit", "Operation"}, {"ANSWERED_BY", "CONSUMES", "PRODUCES"})


@pytest.mark.parametrize("name", SERVICE_STATEMENTS)
def test_every_statement_uses_declared_labels_and_types(name: str) -> None:
    labels, types = used(_code(name))
    assert labels <= NODE_LABELS, f"declare {labels - NODE_LABELS} in graph_schema/labels.py"
    assert types <= set(EDGE_TYPES), f"declare {types - set(EDGE_TYPES)} in graph_schema/labels.py"


def test_the_schema_creates_exactly_the_declared_constraints_and_indexes() -> None:
    created: dict[str, set[str]] = {"CONSTRAINT": set(), "INDEX": set()}
    for name in names("schema"):
        for kind, schema_name in _SCHEMA.findall(_code(name)):
            created[kind].add(schema_name)
    assert created == {"CONSTRAINT": set(CONSTRAINTS), "INDEX": set(INDEXES)}


def test_every_declared_label_and_type_is_used() -> None:
    labels: set[str] = set()
    types: set[str] = set()
    for name in SERVICE_STATEMENTS:
        found_labels, found_types = used(_code(name))
        labels |= found_labels
        types |= found_types
    assert labels == NODE_LABELS
    assert types == set(EDGE_TYPES)
