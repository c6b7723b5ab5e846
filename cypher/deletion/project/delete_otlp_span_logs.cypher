// DELETE /project: the project's kept GenAI log events (one node per span), a seek on their
// (project, id) key (`id IS NOT NULL` lets the planner use the composite index).
// $params: project (string), batch (int)
MATCH (n:OtlpSpanLogs {project: $project})
WHERE n.id IS NOT NULL
WITH n LIMIT $batch
DETACH DELETE n
RETURN count(*) AS deleted
