// One operation of a project's graph with its direct neighbours: the units it consumed and
// produced (argument order), and the cases whose stored attribution blames it; at most 200 each.
// $params: project (string), id (string)
MATCH (o:Operation {project: $project, id: $id})
RETURN o.id AS id, o.name AS name, o.kind AS kind, o.system AS system,
       o.session_id AS session_id, o.ts AS ts, o.attributes AS attributes,
       COLLECT {
         MATCH (o)-[r:CONSUMES]->(u:Unit) RETURN u.id AS unit ORDER BY r.position, unit LIMIT 200
       } AS consumes,
       COLLECT {
         MATCH (o)-[r:PRODUCES]->(u:Unit) RETURN u.id AS unit ORDER BY r.position, unit LIMIT 200
       } AS produces,
       COLLECT {
         MATCH (a:Attribution)-[:BLAMES]->(o) RETURN DISTINCT a.case_id AS id ORDER BY id LIMIT 200
       } AS blamed_in
