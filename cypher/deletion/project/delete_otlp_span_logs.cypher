// DELETE /project: the project's kept GenAI log events (one node per span), a seek on their key.
// $params: project (string), batch (int)
MATCH (n:OtlpSpanLogs {project: $project})
WITH n LIMIT $batch
DETACH DELETE n
RETURN count(*) AS deleted
