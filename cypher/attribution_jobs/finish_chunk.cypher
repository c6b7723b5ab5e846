// Marks a chunk done, last in the write that stored its results and its cases' states
// (attribution_jobs/claim_cases), and completes the job when it was the last chunk left. The
// chunk's write lock is taken before done is read, so a chunk redone after its lease expired
// counts once; the job's lock comes after (held only until the commit), so of two writes
// finishing the last two chunks the second sees the first's count and completes the job. A
// stopped job's chunks are still marked (their results are kept); only a running job
// completes. Returns the job's status afterwards.
// $params: project (string), job_id (string), seq (int)
MATCH (k:JobChunk {project: $project, job_id: $job_id, seq: $seq})-[:CHUNK_OF]->(j:AttributionJob)
SET k.take_lock = true
REMOVE k.take_lock
WITH k, j, k.done IS NULL AS first
CALL (k, first) {
  WITH k WHERE first
  SET k.done = datetime()
  REMOVE k.free_at
}
SET j.updated_at = datetime(), j.heartbeat_at = datetime(),
    j.chunks_left = j.chunks_left - CASE WHEN first THEN 1 ELSE 0 END
WITH j
CALL (j) {
  WITH j WHERE j.chunks_left = 0 AND j.status = 'running'
  SET j.status = 'completed', j.finished_at = datetime()
  REMOVE j.active_project
}
RETURN j.status AS status
