// Gives a stopped or interrupted job (running, its runner silent for $stale_s seconds) to a new
// runner. Taking active_project again fails on the attribution_job_active constraint when
// another job of the project is active. Returns no row when the job is in no state to resume.
// $params: project (string), job_id (string), runner (string), stale_s (int)
MATCH (j:AttributionJob {project: $project, id: $job_id})
WHERE j.status = 'stopped'
   OR (j.status = 'running' AND j.heartbeat_at < datetime() - duration({seconds: $stale_s}))
SET j.status = 'running', j.runner = $runner, j.heartbeat_at = datetime(),
    j.active_project = $project, j.resumed_at = datetime()
REMOVE j.stopped_at
RETURN j.judge AS judge, j.refresh AS refresh, j.max_llm_calls AS max_llm_calls
