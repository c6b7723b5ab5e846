"""service/adhoc/bound.py: naming the caller's returned items, and Neo4j's estimate of a row's
size, which must never exceed the service's own count (or the wrapper would drop rows)."""

from __future__ import annotations

import itertools
import json
import random
from typing import Any

import httpx
import pytest
from neo4j import Driver, RoutingControl

from service.adhoc.bound import (
    MAX_ROW_BYTES,
    ROW_BYTES,
    UnboundableQuery,
    bounded_query,
    name_returns,
    value_size,
)
from service.adhoc.service import to_json
from tests.support.traces import demo_batch

NAMED = [
    # (query, its columns as EXPLAIN reports them, the query with every item named)
    ("RETURN 1 AS x", ["x"], "RETURN 1 AS x"),
    (
        "MATCH (o:Operation {project: $project}) RETURN o.kind, count(*) ORDER BY count(*) DESC",
        ["o.kind", "count(*)"],
        "MATCH (o:Operation {project: $project}) RETURN o.kind AS `o.kind`, "
        "count(*) AS `count(*)` ORDER BY count(*) DESC",
    ),
    (
        "MATCH (n) RETURN DISTINCT *, n.id LIMIT 2",
        ["n", "n.id"],
        "MATCH (n) RETURN DISTINCT *, n.id AS `n.id` LIMIT 2",
    ),
    ("RETURN 'a`b'", ["'a`b'"], "RETURN 'a`b' AS `'a``b'`"),
    (
        "UNWIND [1] AS x RETURN x UNION ALL UNWIND [2] AS x RETURN DISTINCT x",
        ["x"],
        "UNWIND [1] AS x RETURN x AS `x` UNION ALL UNWIND [2] AS x RETURN DISTINCT x AS `x`",
    ),
    (
        "CALL () { MATCH (n) RETURN n.id AS i } "
        "RETURN i, CASE WHEN i = 1 THEN 2 END, [x IN [i] | x]",
        ["i", "CASE WHEN i = 1 THEN 2 END", "[x IN [i] | x]"],
        "CALL () { MATCH (n) RETURN n.id AS i } RETURN i AS `i`, CASE WHEN i = 1 THEN 2 END AS "
        "`CASE WHEN i = 1 THEN 2 END`, [x IN [i] | x] AS `[x IN [i] | x]`",
    ),
    (
        "WITH 1 AS limit, {end: 2} AS m RETURN limit, m.end, m.limit + 1 SKIP 0",
        ["limit", "m.end", "m.limit + 1"],
        "WITH 1 AS limit, {end: 2} AS m RETURN limit AS `limit`, m.end AS `m.end`, "
        "m.limit + 1 AS `m.limit + 1` SKIP 0",
    ),
    ("RETURN 1 // a comment", ["1"], "RETURN 1 AS `1` // a comment"),
    (
        "MATCH (x:Unit|Case) WITH x.kind AS kind RETURN DISTINCT * ORDER BY kind",
        ["kind"],
        "MATCH (x:Unit|Case) WITH x.kind AS kind RETURN DISTINCT * ORDER BY kind",
    ),
    (
        "MATCH (x:Unit|End) RETURN [y IN [x] | CASE WHEN y.a THEN 1 END], 2 * 3",
        ["[y IN [x] | CASE WHEN y.a THEN 1 END]", "2 * 3"],
        "MATCH (x:Unit|End) RETURN [y IN [x] | CASE WHEN y.a THEN 1 END] AS "
        "`[y IN [x] | CASE WHEN y.a THEN 1 END]`, 2 * 3 AS `2 * 3`",
    ),
]


@pytest.mark.parametrize(("query", "columns", "named"), NAMED)
def test_every_returned_expression_gets_its_column_name(
    query: str, columns: list[str], named: str
) -> None:
    assert name_returns(query, columns) == named


def test_a_query_whose_items_cannot_be_told_apart_is_refused() -> None:
    with pytest.raises(UnboundableQuery):
        name_returns("MATCH (n) WITH n", ["n"])
    with pytest.raises(UnboundableQuery):
        name_returns("RETURN 1, 2", ["1"])


def test_the_estimate_grows_linearly_with_its_depth() -> None:
    sizes = [len(value_size(depth)) for depth in range(1, 6)]
    steps = {b - a for a, b in itertools.pairwise(sizes)}
    assert len(steps) == 1


def _service_count(row: list[Any]) -> int:
    """The bytes the service counts for a row (``_Budget.keep``)."""
    jsoned = [to_json(v) for v in row]
    return len(json.dumps(jsoned, ensure_ascii=False, separators=(",", ":")).encode()) + 1


def _estimates(driver: Driver, query: str, columns: list[str], **parameters: Any) -> list[float]:
    """For each row of ``query`` wrapped: its estimate over the service's count (at most 1)."""
    records, _, keys = driver.execute_query(
        bounded_query(query, columns),
        {**parameters, MAX_ROW_BYTES: 2**40},
        database_="neo4j",
        routing_=RoutingControl.READ,
    )
    assert keys == [*columns, ROW_BYTES]
    ratios = []
    for record in records:
        values = list(record.values())
        estimate, counted = values[-1], _service_count(values[:-1])
        assert 0 < estimate <= counted, (query, estimate, counted, values[:-1])
        ratios.append(estimate / counted)
    return ratios


def _random_value(rng: random.Random, depth: int = 1) -> Any:
    kinds = ["int", "float", "str", "scalar"] + (["list", "map"] if depth < 5 else [])
    kind = rng.choice(kinds)
    if kind == "int":
        return rng.randint(-(2**62), 2**62)
    if kind == "float":
        return rng.uniform(-1e9, 1e9)
    if kind == "str":
        return "".join(rng.choice('ab é\U0001f600"\\\n\t') for _ in range(rng.randrange(10)))
    if kind == "scalar":
        return rng.choice([True, False, None])
    if kind == "list":
        return [_random_value(rng, depth + 1) for _ in range(rng.randrange(4))]
    return {f"k{i}{rng.choice(['', 'é', ' x'])}": _random_value(rng, depth + 1) for i in range(3)}


def test_the_estimate_never_exceeds_the_services_count_of_random_values(
    neo4j_driver: Driver,
) -> None:
    rng = random.Random(21)
    # One parameter for every row: Neo4j plans a query again for each new parameter type.
    rows = [[_random_value(rng) for _ in range(3)] for _ in range(300)]
    ratios = _estimates(
        neo4j_driver,
        "UNWIND $rows AS row RETURN row[0] AS a, row[1] AS b, row[2] AS c",
        ["a", "b", "c"],
        rows=rows,
    )
    assert len(ratios) == 300


def test_the_estimate_never_exceeds_the_services_count_of_graph_values(
    client: httpx.Client, neo4j_driver: Driver, project: str
) -> None:
    assert client.post("/traces", json=demo_batch(project)).status_code == 200
    ratios = _estimates(
        neo4j_driver,
        "MATCH p = (u:Unit {project: $project})-[*0..3]-(x) "
        "RETURN p, u, x, relationships(p) AS rs, [n IN nodes(p) | properties(n)] AS ps, "
        "u.ts AS ts, duration('P1DT2H') AS d, point({x: 1.5, y: 2}) AS pt LIMIT 200",
        ["p", "u", "x", "rs", "ps", "ts", "d", "pt"],
        project=project,
    )
    assert len(ratios) == 200
    assert min(ratios) > 0.5  # close enough to bound what one row may bring back
