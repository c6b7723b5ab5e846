// A project's attribution jobs, newest first (ids only; GET /attribution-jobs/{id} for each).
// $params: project (string), skip (int), limit (int)
MATCH (j:AttributionJob {project: $project})
WHERE j.id IS NOT NULL  // seeks the (project, id) key index
RETURN j.id AS id
ORDER BY j.created_at DESC, j.id
SKIP $skip
LIMIT $limit
