// A page of a session's turns in conversation order, each with the operations that consumed
// it (what the turn caused) and what each of those produced. The turns are the message units
// the session's operations consume and those naming the session as conversation_id
// (sessions/session_summaries). Order: the turn's own ts, else the time of the first operation
// that read it; then its position among that operation's inputs (OTLP messages carry no ts:
// one call reads the whole conversation so far, in order); then its id. Turns with no time
// at all come last.
// Bounded: $limit turns after $skip, at most $operation_limit operations per turn (earliest
// first; `operation_count` says how many there are), at most $output_limit outputs per
// operation (in result order; `output_count`), every content cut to $value_chars characters
// (`content_chars`: the stored length of a content cut, else null), attributes (read for the
// role) only when at most $value_chars long. Times are [epoch seconds, nanosecond, offset
// seconds] (service/neo4j_values.py: from_epoch). The hints keep each branch on its index seek
// (without them the planner was seen to scan a whole index of the project and filter it).
// $params: project (string), session_id (string), skip (int), limit (int),
//          operation_limit (int), output_limit (int), value_chars (int)
CALL () {
  MATCH (o:Operation {project: $project, session_id: $session_id})-[:CONSUMES]->(m:Unit)
  USING INDEX SEEK o:Operation(project, session_id)
  WHERE m.kind = 'message'
  RETURN m
  UNION
  MATCH (o:Operation {project: $project, conversation_id: $session_id})-[:CONSUMES]->(m:Unit)
  USING INDEX SEEK o:Operation(project, conversation_id)
  WHERE m.kind = 'message'
  RETURN m
  UNION
  MATCH (m:Unit {project: $project, conversation_id: $session_id})
  USING INDEX SEEK m:Unit(project, conversation_id)
  WHERE m.kind = 'message'
  RETURN m
}
CALL (m) {
  OPTIONAL MATCH (m)<-[r:CONSUMES]-(reader:Operation)
  WITH r, reader
  ORDER BY reader.ts, r.position
  LIMIT 1
  RETURN reader.ts AS first_read, r.position AS position
}
WITH m, coalesce(m.ts, first_read) AS at, position
ORDER BY at, position, m.id
SKIP $skip
LIMIT $limit
RETURN m.id AS id,
       left(m.content, $value_chars) AS content,
       CASE WHEN size(m.content) > $value_chars THEN size(m.content) END AS content_chars,
       CASE WHEN size(m.attributes) <= $value_chars THEN m.attributes END AS attributes,
       CASE WHEN at IS NULL THEN null
         ELSE [at.epochSeconds, at.nanosecond, at.offsetSeconds] END AS at,
       COUNT { (m)<-[:CONSUMES]-(:Operation) } AS operation_count,
       COLLECT {
         MATCH (m)<-[:CONSUMES]-(o:Operation)
         WITH o
         ORDER BY o.ts, o.id
         LIMIT $operation_limit
         RETURN o {
           .id, .name, .kind, .system, .session_id,
           ts: [o.ts.epochSeconds, o.ts.nanosecond, o.ts.offsetSeconds],
           output_count: COUNT { (o)-[:PRODUCES]->(:Unit) },
           outputs: COLLECT {
             MATCH (o)-[p:PRODUCES]->(u:Unit)
             WITH u, p
             ORDER BY p.position, u.id
             LIMIT $output_limit
             RETURN u {
               .id, .kind,
               content: left(u.content, $value_chars),
               content_chars: CASE WHEN size(u.content) > $value_chars THEN size(u.content) END
             }
           }
         }
       } AS operations
