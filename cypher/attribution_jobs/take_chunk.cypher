// Takes a free chunk of any running job for $holder, as one compare-and-set: a chunk is free
// when its free_at has passed (never taken, or its holder's lease expired: the holder died, or
// stopped renewing it). The write locks of the $look oldest free chunks are taken, in the order
// every take locks in (project, job, seq: two takers never wait on each other in a cycle),
// before free_at is read again; the oldest still free is taken. Of takers polling at once the second waits for
// the first's commit and takes the next chunk: a taker comes back empty only when nothing is
// free, never because another took the chunk it aimed at. The lease lasts $lease_ms by the
// store's clock. The job's heartbeat_at says a process works on it; taken_by lists every holder
// the chunk had. Only jobs whose judge this process can run are taken: a replica without an LLM
// endpoint leaves an llm job's chunks to those that have one (it would fail them). Returns no
// row when nothing was taken. The job's state and judge are asked of every free chunk before
// the oldest are picked: chunks no process here can take (an llm job's on a replica without an
// LLM, a job gone) must not fill the window and starve the jobs behind them.
// $params: holder (string), lease_ms (int), look (int: candidates locked),
//          judges (list of string: the judge kinds this process can run)
MATCH (k:JobChunk)
WHERE k.free_at <= datetime()
MATCH (k)-[:CHUNK_OF]->(j:AttributionJob {status: 'running'})
WHERE coalesce(j.judge, 'heuristic') IN $judges
WITH k ORDER BY k.free_at, k.project, k.job_id, k.seq LIMIT $look
WITH k ORDER BY k.project, k.job_id, k.seq
SET k.take_lock = true
REMOVE k.take_lock
WITH k WHERE k.free_at <= datetime()
WITH k ORDER BY k.free_at, k.project, k.job_id, k.seq LIMIT 1
MATCH (k)-[:CHUNK_OF]->(j:AttributionJob {status: 'running'})
SET k.holder = $holder, k.free_at = datetime() + duration({milliseconds: $lease_ms}),
    k.taken_by = coalesce(k.taken_by, []) + $holder, j.heartbeat_at = datetime()
RETURN k.project AS project, k.job_id AS job_id, k.seq AS seq,
       j.judge AS judge, j.refresh AS refresh, j.max_llm_calls AS max_llm_calls
