// Stops a running (or interrupted) job: its runner ends at its next batch, what it stored is
// kept, and the project's active slot is released. A job in another state is returned as is.
// $params: project (string), job_id (string)
MATCH (j:AttributionJob {project: $project, id: $job_id})
CALL (j) {
  WITH j WHERE j.status = 'running'
  SET j.status = 'stopped', j.stopped_at = datetime()
  REMOVE j.active_project
}
RETURN j.status AS status
