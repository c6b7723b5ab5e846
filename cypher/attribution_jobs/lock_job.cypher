// Says whether the runner still owns the job (a resume gives it a new runner; a stop sets its
// status), reading it under the job's write lock so that a resume committing at the same time
// is seen. Run last in a batch's transaction, so the lock is held only until its commit.
// $params: project (string), job_id (string), runner (string)
MATCH (j:AttributionJob {project: $project, id: $job_id})
SET j.updated_at = datetime()
WITH j
RETURN j.status = 'running' AND j.runner = $runner AS owned
