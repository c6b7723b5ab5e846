// Units known only by id (defined = false): an operation or a case points at them, yet no batch
// has defined their content, so every walk through them is blind. In id order.
// $params: project (string), skip (int), limit (int)
MATCH (u:Unit {project: $project})
WHERE u.id IS NOT NULL AND u.defined = false  // id IS NOT NULL: seek the (project, id) key index
WITH u
ORDER BY u.id
SKIP $skip
LIMIT $limit
RETURN u.id AS unit,
       COLLECT { MATCH (o:Operation)-[:CONSUMES]->(u) RETURN o.id AS id ORDER BY id } AS consumed_by,
       COLLECT { MATCH (o:Operation)-[:PRODUCES]->(u) RETURN o.id AS id ORDER BY id } AS produced_by,
       COLLECT {
         MATCH (c:Case)-[:ANSWERED_BY|EVIDENCE]->(u)
         RETURN DISTINCT c.id AS id ORDER BY id
       } AS cases
