// The first operations of a session in time order (then id), those naming it as session_id or
// as conversation_id, with how many units each consumed and produced: what the session did,
// the steps no turn caused included (a search and an answer read a query, not a message).
// The hints keep each branch on its index seek. `ts` is [epoch seconds, nanosecond, offset seconds] (service/neo4j_values.py: from_epoch).
// $params: project (string), session_id (string), limit (int: at most this many operations)
CALL () {
  MATCH (o:Operation {project: $project, session_id: $session_id})
  USING INDEX SEEK o:Operation(project, session_id)
  RETURN o
  UNION
  MATCH (o:Operation {project: $project, conversation_id: $session_id})
  USING INDEX SEEK o:Operation(project, conversation_id)
  RETURN o
}
WITH o
ORDER BY o.ts, o.id
LIMIT $limit
RETURN o.id AS id, o.name AS name, o.kind AS kind, o.system AS system,
       [o.ts.epochSeconds, o.ts.nanosecond, o.ts.offsetSeconds] AS ts,
       COUNT { (o)-[:CONSUMES]->(:Unit) } AS inputs,
       COUNT { (o)-[:PRODUCES]->(:Unit) } AS outputs
