// The cases a session asked, in the order they were answered (the answering operation's time,
// else the answer unit's; then id): those whose answer one of the session's operations
// produced, or whose answer unit names the session as conversation_id. Each with its verdict,
// the given answer (cut to $value_chars characters) and its stored attribution (the newest,
// as attributions/get_attribution reads it): status, error type, confidence, reason and the
// blamed operation's id. `answered_at` is [epoch seconds, nanosecond, offset seconds].
// The operation branches walk their (project, id, ts) index in ts order and stop after $limit
// cases (sessions/session_operations says why they order by the index's leading properties),
// so a page of a session stamped on a million operations reads about $limit of them; the
// answer units naming the conversation are read whole (a conversation's units, not a
// deployment's). The union is ordered again as the page is, and cut to $limit.
// $params: project (string), session_id (string), limit (int: at most this many cases),
//          value_chars (int)
CALL () {
  MATCH (o:Operation {project: $project, session_id: $session_id})
  USING INDEX SEEK o:Operation(project, session_id, ts)
  WHERE o.ts IS NOT NULL
  MATCH (o)<-[:PRODUCED_BY]-(:Unit)<-[:ANSWERED_BY]-(c:Case)
  WITH c, o
  ORDER BY o.project, o.session_id, o.ts, c.id
  LIMIT $limit
  RETURN c
  UNION
  MATCH (o:Operation {project: $project, conversation_id: $session_id})
  USING INDEX SEEK o:Operation(project, conversation_id, ts)
  WHERE o.ts IS NOT NULL
  MATCH (o)<-[:PRODUCED_BY]-(:Unit)<-[:ANSWERED_BY]-(c:Case)
  WITH c, o
  ORDER BY o.project, o.conversation_id, o.ts, c.id
  LIMIT $limit
  RETURN c
  UNION
  MATCH (u:Unit {project: $project, conversation_id: $session_id})<-[:ANSWERED_BY]-(c:Case)
  USING INDEX SEEK u:Unit(project, conversation_id)
  RETURN c
}
OPTIONAL MATCH (c)-[:ANSWERED_BY]->(answer:Unit)
OPTIONAL MATCH (answer)-[:PRODUCED_BY]->(op:Operation)
WITH c, head(collect(answer)) AS answer, head(collect(op)) AS op
WITH c, answer, coalesce(op.ts, answer.ts) AS at
ORDER BY at, c.id
LIMIT $limit
CALL (c) {
  OPTIONAL MATCH (c)-[:ATTRIBUTED]->(a:Attribution)
  WITH a
  ORDER BY a.created_at DESC
  LIMIT 1
  OPTIONAL MATCH (a)-[:BLAMES]->(blamed:Operation)
  RETURN a, blamed
}
RETURN c.id AS id, c.question AS question, c.expected_answer AS expected_answer,
       c.verdict AS verdict, left(answer.content, $value_chars) AS answer,
       CASE WHEN at IS NULL THEN null
         ELSE [at.epochSeconds, at.nanosecond, at.offsetSeconds] END AS answered_at,
       a.status AS attribution_status, a.error_type AS error_type,
       a.confidence AS confidence, left(a.reason, $value_chars) AS reason,
       blamed.id AS blamed_operation
