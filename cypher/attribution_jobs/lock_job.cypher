// Takes the job's write lock for the rest of the transaction and says whether the runner still
// owns it (a resume gives it a new runner; a stop sets its status).
// $params: project (string), job_id (string), runner (string)
MATCH (j:AttributionJob {project: $project, id: $job_id})
SET j.updated_at = datetime()
RETURN j.status = 'running' AND j.runner = $runner AS owned
