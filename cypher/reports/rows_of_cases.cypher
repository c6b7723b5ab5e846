// The report rows of some cases (by id), as reports/case_rows reads them for a whole project,
// with the same rules for a case's system and time (service/reports/models.py): the writers
// count a case with it after they change what it counts (service/reports/counts/repository.py). A test
// (tests/reports/test_kept_counts.py) compares what both give, field by field.
// $params: project (string), ids (list of string)
UNWIND $ids AS case_id
MATCH (c:Case {project: $project, id: case_id})
WITH c, head(COLLECT {
  MATCH (c)-[:ATTRIBUTED]->(x:Attribution) RETURN x ORDER BY x.created_at DESC
}) AS a
OPTIONAL MATCH (a)-[:BLAMES]->(o:Operation)
WITH c, a, o, head(COLLECT { MATCH (c)-[:ANSWERED_BY]->(u:Unit) RETURN u ORDER BY u.id }) AS answer
WITH c, a, o, answer,
     head(COLLECT {
       MATCH (answer)-[:PRODUCED_BY]->(p:Operation)
       WHERE p.system IS NOT NULL
       RETURN p.system ORDER BY p.ts, p.id
     }) AS answer_system
WITH c, a, o, coalesce(answer_system, o.system) AS system, coalesce(answer.ts, a.created_at) AS at
RETURN c.id AS case_id, c.verdict AS verdict, system,
       CASE WHEN at IS :: ZONED DATETIME NOT NULL OR at IS :: LOCAL DATETIME NOT NULL
         THEN datetime({datetime: at, timezone: 'UTC'}).epochMillis
       END AS at_ms,
       a.status AS status, a.error_type AS error_type, a.result AS result,
       o.id AS operation_id, o.name AS operation_name, o.system AS operation_system,
       o.attributes AS operation_attributes
