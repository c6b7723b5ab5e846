// One unit of a project's graph with its direct neighbours: the operations that produced and
// consumed it (time order), the cases that name it as answer or evidence; at most 200 of each.
// $params: project (string), id (string)
MATCH (u:Unit {project: $project, id: $id})
RETURN u.id AS id, u.kind AS kind, u.content AS content, u.ts AS ts, u.attributes AS attributes,
       coalesce(u.defined, true) AS defined,
       COLLECT {
         MATCH (p:Operation)-[:PRODUCES]->(u) RETURN p.id AS op ORDER BY p.ts, op LIMIT 200
       } AS produced_by,
       COLLECT {
         MATCH (o:Operation)-[:CONSUMES]->(u) RETURN o.id AS op ORDER BY o.ts, op LIMIT 200
       } AS consumed_by,
       COLLECT {
         MATCH (c:Case)-[:ANSWERED_BY|EVIDENCE]->(u) RETURN DISTINCT c.id AS id ORDER BY id LIMIT 200
       } AS cases
