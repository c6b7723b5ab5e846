// The runner says it is alive; answers whether it still owns a running job (false: the job was
// stopped, or resumed by another runner, and this runner should end). The first SET takes the
// job's write lock before ownership is read, so a resume committing at the same moment is
// seen (resume_job takes the same lock first).
// $params: project (string), job_id (string), runner (string)
MATCH (j:AttributionJob {project: $project, id: $job_id})
SET j.claim_lock = true
REMOVE j.claim_lock
WITH j, j.status = 'running' AND j.runner = $runner AS owned
CALL (j, owned) {
  WITH j WHERE owned
  SET j.heartbeat_at = datetime()
}
RETURN owned
