// Gives a stopped or interrupted job (running, no process heard of on it for $stale_s seconds
// by the store's clock) back to the takers, as one compare-and-set: the first SET takes the
// job's write lock before its state is read, so of two resumes at once the second waits, then
// reads the first one's fresh heartbeat and claims nothing (a read before the lock would see the
// same stale heartbeat in both, and both would claim). A claimed job's chunks not done lose
// their holder (a dead process's lease is not waited out) and are free from $head_start_ms on,
// so the resuming process, told the job's id, takes them first; with no chunk left it is
// completed at once. Taking active_project again fails on the attribution_job_active
// constraint when another job of the project is active.
// Returns no row when there is no such job; else whether it was claimed, the status and
// heartbeat it had, how many milliseconds old that heartbeat was, and its judge settings.
// $params: project (string), job_id (string), stale_s (float), head_start_ms (int)
MATCH (j:AttributionJob {project: $project, id: $job_id})
SET j.claim_lock = true
REMOVE j.claim_lock
WITH j, j.status AS status, j.heartbeat_at AS heartbeat_at,
     duration.inSeconds(j.heartbeat_at, datetime()).milliseconds AS heartbeat_age_ms
WITH j, status, heartbeat_at, heartbeat_age_ms,
     status = 'stopped' OR (status = 'running' AND heartbeat_age_ms > $stale_s * 1000) AS claimed
CALL (j, claimed) {
  WITH j WHERE claimed
  SET j.status = 'running', j.heartbeat_at = datetime(),
      j.active_project = $project, j.resumed_at = datetime()
  REMOVE j.stopped_at
  WITH j
  CALL (j) {
    MATCH (k:JobChunk)-[:CHUNK_OF]->(j)
    WHERE k.done IS NULL
    SET k.free_at = datetime() + duration({milliseconds: $head_start_ms})
    REMOVE k.holder
  }
  WITH j WHERE j.chunks_left = 0
  SET j.status = 'completed', j.finished_at = datetime()
  REMOVE j.active_project
}
RETURN claimed, status, heartbeat_at, heartbeat_age_ms,
       j.judge AS judge, j.refresh AS refresh, j.max_llm_calls AS max_llm_calls
