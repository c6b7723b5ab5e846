// Ids and verdicts of a project's cases in id order, optionally only those with one verdict.
// $params: project (string), verdict (string or null), skip (int), limit (int)
MATCH (c:Case {project: $project})
WHERE c.id IS NOT NULL  // seeks the (project, id) key index instead of scanning every project
  AND ($verdict IS NULL OR c.verdict = $verdict)
RETURN c.id AS id, c.verdict AS verdict
ORDER BY c.id
SKIP $skip
LIMIT $limit
