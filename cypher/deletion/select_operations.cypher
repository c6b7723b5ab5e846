// The ids of a project's operations a deletion removes: those of one session, or those
// recorded before a time (retention). Used by DELETE /sessions/{id} and DELETE /data.
// ("o.id IS NOT NULL" lets the planner seek the operation_key index on the project, not scan
// every operation of the store.)
// $params: project (string), session_id (string or null), before (datetime or null);
//          at least one of session_id / before is set by the caller.
MATCH (o:Operation {project: $project})
WHERE o.id IS NOT NULL
  AND ($session_id IS NULL OR o.session_id = $session_id)
  AND ($before IS NULL OR o.ts < $before)
RETURN o.id AS id
