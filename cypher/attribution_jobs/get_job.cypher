// One attribution job with its progress, counted from the states of its COVERS relationships
// (no state yet: pending), how many results took a verdict from the LLM, and its first failures.
// `stale` says that no process has been heard of on a running job (a take, a lease renewal, a
// chunk stored) for more than $stale_s seconds by the store's clock, the clock leases and
// attribution_jobs/resume_job use (the processes working on it died: the job is interrupted,
// and its chunks are taken over once their leases expire).
// $params: project (string), job_id (string), stale_s (float), failures (int: at most this many)
MATCH (j:AttributionJob {project: $project, id: $job_id})
RETURN j {.*} AS job,
       j.status = 'running'
         AND duration.inSeconds(j.heartbeat_at, datetime()).milliseconds > $stale_s * 1000
         AS stale,
       COLLECT {
         MATCH (j)-[r:COVERS]->(:Case)
         WITH r.state AS state, count(*) AS n, count(CASE WHEN r.on_llm THEN 1 END) AS on_llm
         RETURN {state: state, n: n, on_llm: on_llm}
       } AS counts,
       COLLECT {
         MATCH (j)-[r:COVERS {state: 'failed'}]->(c:Case)
         RETURN {case_id: c.id, message: r.message} ORDER BY c.id LIMIT $failures
       } AS failures
