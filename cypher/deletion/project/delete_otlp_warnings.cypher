// DELETE /project: the project's OTLP warnings log (one node), a seek on its key.
// $params: project (string), batch (int)
MATCH (n:OtlpWarnings {project: $project})
WITH n LIMIT $batch
DETACH DELETE n
RETURN count(*) AS deleted
