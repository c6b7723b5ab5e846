"""The Cypher catalogue: every statement documented, used, and only ever passed values as params."""

from __future__ import annotations

import re

import pytest

from cypher import names, query
from tests.support.servers import REPO

SOURCES = "\n".join(
    p.read_text()
    for folder in ("service", "ingest", "graph_schema")
    for p in (REPO / folder).rglob("*.py")
)
BENCHMARK_SOURCES = "\n".join(p.read_text() for p in (REPO / "benchmarks").rglob("*.py"))
"""A statement in ``cypher/benchmarks/`` is used by a benchmark, not by the service."""


@pytest.mark.parametrize("name", names())
def test_statement_is_documented_and_used(name: str) -> None:
    text = query(name)
    header = [line for line in text.splitlines() if line.startswith("//")]
    assert any("$params" in line for line in header), f"{name} has no $params header"
    params = set(re.findall(r"\$([A-Za-z_]\w*)", text.split("\n", len(header))[-1]))
    documented = " ".join(header)
    for param in params:
        assert param in documented, f"{name}: ${param} is not documented in its header"
    folder = name.split("/")[0]
    sources = BENCHMARK_SOURCES if folder == "benchmarks" else SOURCES
    assert f'"{name}"' in sources or folder == "schema", f"{name} is never used"


def test_unknown_statement_is_an_error() -> None:
    with pytest.raises(FileNotFoundError):
        query("ingest/no_such_statement")


def test_no_cypher_in_python_sources() -> None:
    pattern = re.compile(r"""["'](\s*)(MATCH|MERGE|CREATE|UNWIND)\s+[\(\$]""")
    assert not pattern.search(SOURCES)
