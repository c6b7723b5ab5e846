// Ends a running job as failed (a taker hit an unexpected error), with the error, releasing the
// project's active slot; its chunks not done are no longer taken (no free_at).
// $params: project (string), job_id (string), error (string)
MATCH (j:AttributionJob {project: $project, id: $job_id})
WHERE j.status = 'running'
SET j.status = 'failed', j.error = $error, j.finished_at = datetime()
REMOVE j.active_project
WITH j
CALL (j) {
  MATCH (k:JobChunk)-[:CHUNK_OF]->(j)
  WHERE k.free_at IS NOT NULL
  REMOVE k.free_at
}
RETURN j.id AS id
