// Source messages whose content never reached any memory: no unit of kind memory among their
// descendants, following (message)<-[:CONSUMES]-(operation)<-[:PRODUCED_BY]-(output) forward
// for at most 10 operation steps (20 relationships; Cypher takes no parameter as a bound).
// A message only consumed by operations that produced nothing, or never consumed at all, is
// reported too. In message id order.
// $params: project (string), skip (int), limit (int),
//          preview (int: at most this many characters of the message's content)
// Plan: messages are walked in id order from the unit_kind_id index (project, kind, id; the
// ORDER BY names the constant project and kind first, so the planner sees the index's order):
// a page stops once it has its rows. A project that lost no message is read to the end.
MATCH (m:Unit {project: $project, kind: 'message'})
USING INDEX m:Unit(project, kind, id)
WHERE m.id IS NOT NULL
  AND NOT EXISTS { (m)<-[:PRODUCED_BY|CONSUMES*1..20]-(:Unit {kind: 'memory'}) }
WITH m
ORDER BY m.project, m.kind, m.id
SKIP $skip
LIMIT $limit
WITH m, COLLECT { MATCH (o:Operation)-[:CONSUMES]->(m) RETURN o ORDER BY o.ts, o.id } AS consumers
RETURN m.id AS message,
       left(m.content, $preview) AS preview,
       m.ts AS ts,
       [o IN consumers | o.id] AS consumed_by,
       [o IN consumers WHERE NOT EXISTS { (o)-[:PRODUCES]->() } | o.id] AS produced_nothing,
       head([o IN consumers WHERE o.session_id IS NOT NULL | o.session_id]) AS session
