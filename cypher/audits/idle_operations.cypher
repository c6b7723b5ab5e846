// Operations with no inputs or no outputs (no CONSUMES or no PRODUCES edge): an extraction that
// produced nothing lost whatever it read; one without inputs came from nowhere. `missing` says
// which side is empty. Optionally only operations of one kind. In time, then id order.
// $params: project (string), skip (int), limit (int),
//          kind (string or null: only operations of this kind; null for every kind)
// Plan: operations are walked in time order from the operation_time index (the ORDER BY names
// o.project first, a constant, so the planner sees the index's order): a page reads operations
// until it has its rows, not the whole project. (Operations always have ts.)
MATCH (o:Operation {project: $project})
USING INDEX o:Operation(project, ts)
WHERE o.ts IS NOT NULL AND ($kind IS NULL OR o.kind = $kind)
WITH o, EXISTS { (o)-[:CONSUMES]->() } AS has_inputs, EXISTS { (o)-[:PRODUCES]->() } AS has_outputs
WHERE NOT (has_inputs AND has_outputs)
WITH o,
     CASE
       WHEN has_inputs THEN 'outputs'
       WHEN has_outputs THEN 'inputs'
       ELSE 'inputs and outputs'
     END AS missing
ORDER BY o.project, o.ts, o.id
SKIP $skip
LIMIT $limit
RETURN o.id AS operation, o.name AS name, o.kind AS kind, o.session_id AS session, o.ts AS ts,
       missing
