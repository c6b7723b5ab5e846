// Takes a chunk of one running job for $holder, as attribution_jobs/take_chunk does, but also
// a chunk no one ever held whose free_at has not come yet: the head start of the process that
// created or resumed the job (it is told the job's id; other processes join from free_at on).
// The write locks of the $look first free chunks are taken (in seq order, so two takers never
// wait on each other in a cycle) before their state is read again, and the first still free is
// taken: takers of one process starting together each take a chunk, where a single candidate
// let all but one come back empty (and wait idle until the next take). No row: nothing to take.
// $params: project (string), job_id (string), holder (string), lease_ms (int),
//          look (int: candidates locked, at least the process's takers)
MATCH (j:AttributionJob {project: $project, id: $job_id, status: 'running'})
MATCH (k:JobChunk)-[:CHUNK_OF]->(j)
WHERE k.free_at IS NOT NULL AND (k.holder IS NULL OR k.free_at <= datetime())
WITH j, k ORDER BY k.seq LIMIT $look
SET k.take_lock = true
REMOVE k.take_lock
WITH j, k WHERE k.free_at IS NOT NULL AND (k.holder IS NULL OR k.free_at <= datetime())
WITH j, k ORDER BY k.seq LIMIT 1
SET k.holder = $holder, k.free_at = datetime() + duration({milliseconds: $lease_ms}),
    k.taken_by = coalesce(k.taken_by, []) + $holder, j.heartbeat_at = datetime()
RETURN k.project AS project, k.job_id AS job_id, k.seq AS seq,
       j.judge AS judge, j.refresh AS refresh, j.max_llm_calls AS max_llm_calls
