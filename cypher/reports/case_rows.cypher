// One row per case of a project with what an error report counts: its verdict, system and time
// (rules in service/reports/models.py), its stored attribution if any and the blamed operation.
// $params: project (string), system (string or null: only cases of this system),
//          since (datetime or null: only cases at or after it),
//          until (datetime or null: only cases before it)
// (`c.id IS NOT NULL` lets the planner seek the (project, id) key index instead of scanning
// every project's cases.)
// A case has one attribution since attributions/lock_cases; on a store written before that,
// the newest counts, so a case is one row whatever the store holds.
// Returns at_ms, the case's time in milliseconds since the epoch (a datetime without a zone taken
// as UTC; null for a case with no answer time and no attribution: a type predicate holds for
// null unless it says NOT NULL), not the datetime: the Python driver spends ~80 us building
// each DateTime it receives, which made a report of a few hundred cases spend most of its time
// decoding them.
MATCH (c:Case {project: $project})
WHERE c.id IS NOT NULL
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
WHERE ($system IS NULL OR system = $system)
  AND ($since IS NULL OR at >= $since)
  AND ($until IS NULL OR at < $until)
RETURN c.id AS case_id, c.verdict AS verdict, system,
       CASE WHEN at IS :: ZONED DATETIME NOT NULL OR at IS :: LOCAL DATETIME NOT NULL
         THEN datetime({datetime: at, timezone: 'UTC'}).epochMillis
       END AS at_ms,
       a.status AS status, a.error_type AS error_type, a.result AS result,
       o.id AS operation_id, o.name AS operation_name, o.system AS operation_system,
       o.attributes AS operation_attributes
