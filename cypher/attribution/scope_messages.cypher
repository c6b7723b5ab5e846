// The source messages a case's evidence may be (service/attribution/scope.py): messages read by
// an operation of the case's scope, or naming the scope themselves, recorded no later than the
// answer, that are source messages by the rule of graph_schema/rules.py (no operation made them,
// they are not read only at question time, and a building reader took them that they do not
// quote: a prompt holding a context or answer its reader also read was assembled, not said).
// A message's recorded time is its ts, else the time of the first operation reading it.
// Ordered (latest first, then id) so that a limit keeps the same messages every time. `ts` is
// the recorded time as [epoch seconds, nanosecond, offset seconds] (attribution/ancestors says why).
// Each way of naming a scope is a branch of its own that reads nothing unless the scope is named
// that way (an UNWIND of an empty list ends a branch before its MATCH), and each seeks an index:
// sessions the (project, session_id) index of operations, conversations and users the
// (project, conversation_id) and (project, user_id) indexes of operations and of units (the
// writer keeps those properties, graph_schema/scope_names.py), and an unnamed scope's messages,
// found by attribution/neighbourhood, the unit key. The hints keep the planner on those seeks: without
// them it was seen to plan an index scan of the label and a join.
// $params: project (string), systems (list of string: operations of other systems do not count;
//          empty: any), sessions (list of string: operation session ids), conversations,
//          users (lists of string: kept conversation_id / user_id values), messages (list of
//          string: unit ids, the neighbourhood of an unnamed scope), until (datetime or null:
//          the answer's time), limit (int)
CALL () {
  UNWIND $sessions AS session
  MATCH (o:Operation {project: $project, session_id: session})
  USING INDEX SEEK o:Operation(project, session_id)
  WHERE size($systems) = 0 OR o.system IN $systems
  MATCH (o)-[:CONSUMES]->(u:Unit)
  WHERE coalesce(u.kind, '') = 'message'
  RETURN u
  UNION
  UNWIND $conversations AS conversation
  MATCH (o:Operation {project: $project, conversation_id: conversation})
  USING INDEX SEEK o:Operation(project, conversation_id)
  WHERE size($systems) = 0 OR o.system IN $systems
  MATCH (o)-[:CONSUMES]->(u:Unit)
  WHERE coalesce(u.kind, '') = 'message'
  RETURN u
  UNION
  UNWIND $users AS user
  MATCH (o:Operation {project: $project, user_id: user})
  USING INDEX SEEK o:Operation(project, user_id)
  WHERE size($systems) = 0 OR o.system IN $systems
  MATCH (o)-[:CONSUMES]->(u:Unit)
  WHERE coalesce(u.kind, '') = 'message'
  RETURN u
  UNION
  UNWIND $conversations AS conversation
  MATCH (u:Unit {project: $project, conversation_id: conversation})
  USING INDEX SEEK u:Unit(project, conversation_id)
  WHERE coalesce(u.kind, '') = 'message'
  RETURN u
  UNION
  UNWIND $users AS user
  MATCH (u:Unit {project: $project, user_id: user})
  USING INDEX SEEK u:Unit(project, user_id)
  WHERE coalesce(u.kind, '') = 'message'
  RETURN u
  UNION
  UNWIND $messages AS id
  MATCH (u:Unit {project: $project, id: id})
  WHERE coalesce(u.kind, '') = 'message'
  RETURN u
}
WITH DISTINCT u AS m
WHERE m.id IS NOT NULL
  // rule: source message (graph_schema/rules.py)
  AND NOT EXISTS { (m)-[:PRODUCED_BY]->(:Operation) }
  AND (NOT EXISTS { (m)<-[:CONSUMES]-(:Operation) }
       OR EXISTS { (m)<-[:CONSUMES]-(b:Operation)
                   WHERE NOT coalesce(b.kind, '') IN ['retrieval', 'response', 'evaluation']
                     AND NOT EXISTS { (b)-[:CONSUMES]->(q:Unit)
                                      WHERE q.kind IN ['context', 'answer']
                                        AND size(q.content) >= 20
                                        AND m.content CONTAINS q.content } })
  // end rule
WITH m AS u
CALL (u) {
  OPTIONAL MATCH (u)<-[:CONSUMES]-(reader:Operation)
  RETURN min(reader.ts) AS first_read
}
WITH u, coalesce(u.ts, first_read) AS recorded
WHERE $until IS NULL OR recorded IS NULL OR recorded <= $until
WITH u, recorded
ORDER BY recorded DESC, u.id
LIMIT $limit
RETURN collect(u {
  .id, .kind, .name, .content, .attributes, .defined,
  ts: CASE WHEN recorded IS NULL THEN null
      ELSE [recorded.epochSeconds, recorded.nanosecond, recorded.offsetSeconds] END,
  is_operation: false, edges: []
}) AS nodes
