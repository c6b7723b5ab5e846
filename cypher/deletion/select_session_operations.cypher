// The ids of one session's operations, which DELETE /sessions/{id} removes: those naming it as
// session_id or as conversation_id, the two ways GET /sessions/{id} finds them
// (sessions/session_operations.cypher), so that a session listed is a session deletable.
// Each branch seeks its (project, key) index: the cost is the session's operations, not the
// project's.
// $params: project (string), session_id (string)
CALL () {
  MATCH (o:Operation {project: $project, session_id: $session_id})
  USING INDEX SEEK o:Operation(project, session_id)
  RETURN o
  UNION
  MATCH (o:Operation {project: $project, conversation_id: $session_id})
  USING INDEX SEEK o:Operation(project, conversation_id)
  RETURN o
}
RETURN o.id AS id
