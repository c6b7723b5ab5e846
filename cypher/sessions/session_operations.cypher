// The first operations of a session in time order (then id), those naming it as session_id or
// as conversation_id, with how many units each consumed and produced: what the session did,
// the steps no turn caused included (a search and an answer read a query, not a message).
// Each branch walks its (project, id, ts) index in ts order and stops after $limit rows (ties
// at the last ts are read whole, then cut by id), so a page costs the same in a session of a
// million operations as in one of a hundred; the union is cut to $limit again. The branches
// order by the index's leading properties too (constants here): the planner takes the order
// the index gives only for an ORDER BY on its properties from the first (without them it
// sorted all 100,000 operations of a session).
// `ts` is [epoch seconds, nanosecond, offset seconds] (service/neo4j_values.py: from_epoch).
// $params: project (string), session_id (string), limit (int: at most this many operations)
CALL () {
  MATCH (o:Operation {project: $project, session_id: $session_id})
  USING INDEX SEEK o:Operation(project, session_id, ts)
  WHERE o.ts IS NOT NULL
  WITH o
  ORDER BY o.project, o.session_id, o.ts, o.id
  LIMIT $limit
  RETURN o
  UNION
  MATCH (o:Operation {project: $project, conversation_id: $session_id})
  USING INDEX SEEK o:Operation(project, conversation_id, ts)
  WHERE o.ts IS NOT NULL
  WITH o
  ORDER BY o.project, o.conversation_id, o.ts, o.id
  LIMIT $limit
  RETURN o
}
WITH o
ORDER BY o.ts, o.id
LIMIT $limit
RETURN o.id AS id, o.name AS name, o.kind AS kind, o.system AS system,
       [o.ts.epochSeconds, o.ts.nanosecond, o.ts.offsetSeconds] AS ts,
       COUNT { (o)-[:CONSUMES]->(:Unit) } AS inputs,
       COUNT { (o)-[:PRODUCES]->(:Unit) } AS outputs
