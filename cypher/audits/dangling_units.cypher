// Units known only by id (defined = false): an operation or a case points at them, yet no batch
// has defined their content, so every walk through them is blind. In id order.
// $params: project (string), skip (int), limit (int)
// Plan: a seek on the unit_defined index (project, defined, id) reads only the dangling units,
// in id order (the ORDER BY names the constant project and defined first, so the planner sees
// the index's order): a page costs its rows, not the project.
MATCH (u:Unit {project: $project, defined: false})
WHERE u.id IS NOT NULL
WITH u
ORDER BY u.project, u.defined, u.id
SKIP $skip
LIMIT $limit
RETURN u.id AS unit,
       COLLECT { MATCH (o:Operation)-[:CONSUMES]->(u) RETURN o.id AS id ORDER BY id } AS consumed_by,
       COLLECT { MATCH (o:Operation)-[:PRODUCES]->(u) RETURN o.id AS id ORDER BY id } AS produced_by,
       COLLECT {
         MATCH (c:Case)-[:ANSWERED_BY|EVIDENCE]->(u)
         RETURN DISTINCT c.id AS id ORDER BY id
       } AS cases
