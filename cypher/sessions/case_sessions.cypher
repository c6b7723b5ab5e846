// The sessions a case was asked in (the case page's link): the session_id and conversation_id
// of the operation that produced its answer, and the answer unit's conversation_id
// (sessions/list_sessions says what names a session). Usually one; none when the trace named
// no conversation.
// $params: project (string), case_id (string)
MATCH (c:Case {project: $project, id: $case_id})-[:ANSWERED_BY]->(a:Unit)
OPTIONAL MATCH (a)-[:PRODUCED_BY]->(o:Operation)
UNWIND [a.conversation_id, o.session_id, o.conversation_id] AS name
WITH DISTINCT name
WHERE name IS NOT NULL
RETURN collect(name) AS ids
