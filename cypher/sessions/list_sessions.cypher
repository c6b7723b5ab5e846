// One page of a project's session ids, in id order, after a cursor. A session is a
// conversation, named by an operation's `session_id` (the SDK's session_id, OTLP's session.id
// or gen_ai.conversation.id, an execution graph's session) or by the `conversation_id` the
// writer keeps from an operation's or a unit's attributes (graph_schema/scope_names.py); the
// same value names the same session whichever way. Nodes naming none belong to no session.
// Each way is a branch that seeks its (project, key) range index from the cursor on, in the
// index's order, and stops once it has $limit distinct ids (ordered by the constant project
// first, so that the planner sees the index's order: an ordered distinct and a limit, not a
// distinct of every id and a sort): a page reads the nodes of its own sessions and of the
// next one per branch, never the rest of the project.
// $params: project (string), after (string: only ids sorted after it; "" for the first page),
//          limit (int: at most this many ids)
CALL () {
  MATCH (o:Operation {project: $project})
  USING INDEX o:Operation(project, session_id)
  WHERE o.session_id > $after
  WITH DISTINCT o.project AS p, o.session_id AS id
  ORDER BY p, id
  LIMIT $limit
  RETURN id
  UNION
  MATCH (o:Operation {project: $project})
  USING INDEX o:Operation(project, conversation_id)
  WHERE o.conversation_id > $after
  WITH DISTINCT o.project AS p, o.conversation_id AS id
  ORDER BY p, id
  LIMIT $limit
  RETURN id
  UNION
  MATCH (u:Unit {project: $project})
  USING INDEX u:Unit(project, conversation_id)
  WHERE u.conversation_id > $after
  WITH DISTINCT u.project AS p, u.conversation_id AS id
  ORDER BY p, id
  LIMIT $limit
  RETURN id
}
WITH id
ORDER BY id
LIMIT $limit
RETURN collect(id) AS ids
