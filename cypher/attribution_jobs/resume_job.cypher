// Gives a stopped or interrupted job (running, its runner silent for $stale_s seconds by the
// store's clock) to a new runner, as one compare-and-set: the first SET takes the job's write
// lock before its state is read, so of two resumes at once the second waits, then reads the
// first one's fresh heartbeat and claims nothing (a read before the lock would see the same
// stale heartbeat in both, and both would claim). Taking active_project again fails on the
// attribution_job_active constraint when another job of the project is active.
// Returns no row when there is no such job; else whether it was claimed, the status and
// heartbeat it had, how many milliseconds old that heartbeat was, and its judge settings.
// $params: project (string), job_id (string), runner (string), stale_s (float)
MATCH (j:AttributionJob {project: $project, id: $job_id})
SET j.claim_lock = true
REMOVE j.claim_lock
WITH j, j.status AS status, j.heartbeat_at AS heartbeat_at,
     duration.inSeconds(j.heartbeat_at, datetime()).milliseconds AS heartbeat_age_ms
WITH j, status, heartbeat_at, heartbeat_age_ms,
     status = 'stopped' OR (status = 'running' AND heartbeat_age_ms > $stale_s * 1000) AS claimed
CALL (j, claimed) {
  WITH j WHERE claimed
  SET j.status = 'running', j.runner = $runner, j.heartbeat_at = datetime(),
      j.active_project = $project, j.resumed_at = datetime()
  REMOVE j.stopped_at
}
RETURN claimed, status, heartbeat_at, heartbeat_age_ms,
       j.judge AS judge, j.refresh AS refresh, j.max_llm_calls AS max_llm_calls
