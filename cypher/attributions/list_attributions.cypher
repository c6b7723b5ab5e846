// Stored attributions of a project, newest first, one per case, filtered by the blamed
// operation's system and name and by error type (a null filter matches everything).
// A case has one attribution since attributions/lock_case; on a store written before that, only
// the newest of a case is listed (the NOT EXISTS seeks the (project, case_id) index).
// $params: project (string), system (string or null), error_type (string or null),
//          operation_name (string or null), status (string or null), skip (int), limit (int)
MATCH (a:Attribution {project: $project})
WHERE a.case_id IS NOT NULL  // seeks the (project, case_id) index instead of scanning every project
  AND NOT EXISTS {
    MATCH (newer:Attribution {project: $project, case_id: a.case_id})
    WHERE newer.created_at > a.created_at
       OR (newer.created_at = a.created_at AND elementId(newer) > elementId(a))
  }
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
