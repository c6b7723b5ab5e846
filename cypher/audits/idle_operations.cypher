// Operations with no inputs or no outputs (no CONSUMES or no PRODUCES edge): an extraction that
// produced nothing lost whatever it read; one without inputs came from nowhere. `missing` says
// which side is empty. Optionally only operations of one kind. In time, then id order.
// $params: project (string), skip (int), limit (int),
//          kind (string or null: only operations of this kind; null for every kind)
MATCH (o:Operation {project: $project})
WHERE o.id IS NOT NULL AND ($kind IS NULL OR o.kind = $kind)  // id IS NOT NULL: seek the (project, id) key index
WITH o, EXISTS { (o)-[:CONSUMES]->() } AS has_inputs, EXISTS { (o)-[:PRODUCES]->() } AS has_outputs
WHERE NOT (has_inputs AND has_outputs)
WITH o,
     CASE
       WHEN has_inputs THEN 'outputs'
       WHEN has_outputs THEN 'inputs'
       ELSE 'inputs and outputs'
     END AS missing
ORDER BY o.ts, o.id
SKIP $skip
LIMIT $limit
RETURN o.id AS operation, o.name AS name, o.kind AS kind, o.session_id AS session, o.ts AS ts,
       missing
