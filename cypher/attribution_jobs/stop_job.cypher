// Stops a running (or interrupted) job: its chunks not done are no longer taken (no free_at;
// a taker working on one stores it, and what it stored is kept), and the project's active slot
// is released. A job in another state is returned as is.
// $params: project (string), job_id (string)
MATCH (j:AttributionJob {project: $project, id: $job_id})
CALL (j) {
  WITH j WHERE j.status = 'running'
  SET j.status = 'stopped', j.stopped_at = datetime()
  REMOVE j.active_project
  WITH j
  MATCH (k:JobChunk)-[:CHUNK_OF]->(j)
  WHERE k.free_at IS NOT NULL
  REMOVE k.free_at
}
RETURN j.status AS status
