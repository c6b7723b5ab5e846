// Source messages whose content never reached any memory: no unit of kind memory among their
// descendants, following (message)<-[:CONSUMES]-(operation)<-[:PRODUCED_BY]-(output) forward
// through any number of operations. A message only consumed by operations that produced
// nothing, or never consumed at all, is reported too. A source message is one no operation
// produced and not read only at question time, and not a prompt quoting what its readers read
// (graph_schema/rules.py: the answering call's own message, read by the response alone, is none;
// nor is Mem0's deciding prompt). In message id order.
// $params: project (string), skip (int), limit (int),
//          preview (int: at most this many characters of the message's content)
// Plan: the writer keeps reaches_memory on every unit (cypher/ingest/mark_reach.cypher), so the
// lost messages are exactly those the unit_reach index (project, kind, reaches_memory, id) holds
// with reaches_memory = false: a seek, in id order (the ORDER BY names the constant properties
// first, so the planner sees the index's order). A page costs its rows and the messages read
// only at question time between them (a few edges each), not the project.
MATCH (m:Unit {project: $project, kind: 'message', reaches_memory: false})
USING INDEX m:Unit(project, kind, reaches_memory, id)
WHERE m.id IS NOT NULL
  // rule: source message (graph_schema/rules.py)
  AND NOT EXISTS { (m)-[:PRODUCED_BY]->(:Operation) }
  AND (NOT EXISTS { (m)<-[:CONSUMES]-(:Operation) }
       OR EXISTS { (m)<-[:CONSUMES]-(b:Operation)
                   WHERE NOT coalesce(b.kind, '') IN ['retrieval', 'response', 'evaluation']
                     AND NOT EXISTS { (b)-[:CONSUMES]->(q:Unit)
                                      WHERE q.kind IN ['context', 'answer']
                                        AND size(q.content) >= 20
                                        AND m.content CONTAINS q.content } })
  // end rule
WITH m
ORDER BY m.project, m.kind, m.reaches_memory, m.id
SKIP $skip
LIMIT $limit
WITH m, COLLECT { MATCH (o:Operation)-[:CONSUMES]->(m) RETURN o ORDER BY o.ts, o.id } AS consumers
RETURN m.id AS message,
       left(m.content, $preview) AS preview,
       m.ts AS ts,
       [o IN consumers | o.id] AS consumed_by,
       [o IN consumers WHERE NOT EXISTS { (o)-[:PRODUCES]->() } | o.id] AS produced_nothing,
       head([o IN consumers WHERE o.session_id IS NOT NULL | o.session_id]) AS session
