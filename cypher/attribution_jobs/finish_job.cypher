// Ends a job its runner owns: completed (nothing pending) or failed (with the error), releasing
// the project's active slot.
// $params: project (string), job_id (string), runner (string), status (string: completed or
//          failed), error (string or null)
MATCH (j:AttributionJob {project: $project, id: $job_id})
WHERE j.status = 'running' AND j.runner = $runner
SET j.status = $status, j.error = $error, j.finished_at = datetime()
REMOVE j.active_project
RETURN j.id AS id
