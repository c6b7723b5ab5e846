// Creates a running attribution job covering every failed case the project has now (the cases
// are fixed at the start: a case added later is not part of the job), its cases split in id
// order into chunks of $chunk, each a (:JobChunk) any service process may take
// (attribution_jobs/take_chunk). A chunk is free from free_at on: $head_start_ms from now, so
// the creating process, told the job's id, takes the first chunks before the others join in
// (attribution_jobs/take_job_chunk ignores free_at for chunks no one ever held). Holding
// active_project, it fails on the attribution_job_active constraint when the project has an
// active job. chunks_left counts the chunks not done: the write finishing the last one
// completes the job (attribution_jobs/finish_chunk).
// $params: project (string), job_id (string), judge (string), refresh (bool),
//          max_llm_calls (int or null), chunk (int: cases per chunk), head_start_ms (int)
CREATE (j:AttributionJob {
  project: $project, id: $job_id, active_project: $project, status: 'running',
  judge: $judge, refresh: $refresh, max_llm_calls: $max_llm_calls,
  created_at: datetime(), heartbeat_at: datetime()
})
WITH j
CALL (j) {
  MATCH (c:Case {project: $project, verdict: 'failed'})
  WITH c ORDER BY c.id
  CREATE (j)-[:COVERS]->(c)
  RETURN collect(c) AS cases
}
SET j.total = size(cases), j.chunks = (size(cases) + $chunk - 1) / $chunk,
    j.chunks_left = (size(cases) + $chunk - 1) / $chunk
WITH j, cases
CALL (j, cases) {
  UNWIND range(0, size(cases) - 1, $chunk) AS start
  CREATE (k:JobChunk {
    project: $project, job_id: $job_id, seq: start / $chunk,
    free_at: datetime() + duration({milliseconds: $head_start_ms})
  })-[:CHUNK_OF]->(j)
  WITH k, cases[start..start + $chunk] AS part
  UNWIND part AS c
  CREATE (k)-[:TAKES]->(c)
}
CALL (j) {
  WITH j WHERE j.chunks_left = 0
  SET j.status = 'completed', j.finished_at = datetime()
  REMOVE j.active_project
}
RETURN j.id AS id
