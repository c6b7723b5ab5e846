// Stored attributions of a project, newest first, filtered by the blamed operation's system and
// name and by error type (a null filter matches everything).
// $params: project (string), system (string or null), error_type (string or null),
//          operation_name (string or null), status (string or null), skip (int), limit (int)
MATCH (a:Attribution {project: $project})
WHERE a.case_id IS NOT NULL  // seeks the (project, case_id) index instead of scanning every project
OPTIONAL MATCH (a)-[:BLAMES]->(o:Operation)
WITH a, o
WHERE ($error_type IS NULL OR a.error_type = $error_type)
  AND ($status IS NULL OR a.status = $status)
  AND ($system IS NULL OR o.system = $system)
  AND ($operation_name IS NULL OR o.name = $operation_name)
RETURN a.result AS result
ORDER BY a.created_at DESC, a.case_id
SKIP $skip
LIMIT $limit
