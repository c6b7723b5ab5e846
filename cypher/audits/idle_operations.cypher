// Operations with no inputs or no outputs (no CONSUMES or no PRODUCES edge): an extraction that
// produced nothing lost whatever it read; one without inputs came from nowhere. `missing` says
// which side is empty. Optionally only operations of one kind. In time, then id order.
// $params: project (string), skip (int), limit (int),
//          kind (string or null: only operations of this kind; null for every kind)
// Plan: the writer marks exactly these operations idle (ingest/create_operations), and they are
// walked in time order from the operation_idle index (the ORDER BY names o.project and o.idle
// first, constants, so the planner sees the index's order): a page reads idle operations
// only, however many others the project holds. (Operations always have ts.)
MATCH (o:Operation {project: $project, idle: true})
USING INDEX o:Operation(project, idle, ts)
WHERE o.ts IS NOT NULL AND ($kind IS NULL OR o.kind = $kind)
WITH o, EXISTS { (o)-[:CONSUMES]->() } AS has_inputs, EXISTS { (o)-[:PRODUCES]->() } AS has_outputs
WHERE NOT (has_inputs AND has_outputs)
WITH o,
     CASE
       WHEN has_inputs THEN 'outputs'
       WHEN has_outputs THEN 'inputs'
       ELSE 'inputs and outputs'
     END AS missing
ORDER BY o.project, o.idle, o.ts, o.id
SKIP $skip
LIMIT $limit
RETURN o.id AS operation, o.name AS name, o.kind AS kind, o.session_id AS session, o.ts AS ts,
       missing
