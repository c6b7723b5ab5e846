// DELETE /project: the project's kept report counts, a seek on their (project, key) index.
// $params: project (string), batch (int)
MATCH (n:ReportCount {project: $project})
WHERE n.key IS NOT NULL
WITH n LIMIT $batch
DETACH DELETE n
RETURN count(*) AS deleted
