// Gives chunks to a job written before jobs had them (no j.chunks): its pending cases (COVERS
// without a state), in id order, $chunk to a chunk, free at once. The first SET takes the job's
// write lock before j.chunks is read, so of two processes doing it at once (start-ups, a resume)
// only the first makes chunks. Returns no row when there is no such job or it has chunks.
// $params: project (string), job_id (string), chunk (int: cases per chunk)
MATCH (j:AttributionJob {project: $project, id: $job_id})
SET j.claim_lock = true
REMOVE j.claim_lock
WITH j WHERE j.chunks IS NULL
CALL (j) {
  MATCH (j)-[r:COVERS]->(c:Case)
  WHERE r.state IS NULL
  WITH c ORDER BY c.id
  RETURN collect(c) AS cases
}
SET j.chunks = (size(cases) + $chunk - 1) / $chunk,
    j.chunks_left = (size(cases) + $chunk - 1) / $chunk,
    j.heartbeat_at = datetime()
REMOVE j.runner
WITH j, cases
CALL (j, cases) {
  UNWIND range(0, size(cases) - 1, $chunk) AS start
  CREATE (k:JobChunk {project: $project, job_id: $job_id, seq: start / $chunk})-[:CHUNK_OF]->(j)
  SET k.free_at = CASE WHEN j.status = 'running' THEN datetime() END
  WITH k, cases[start..start + $chunk] AS part
  UNWIND part AS c
  CREATE (k)-[:TAKES]->(c)
}
RETURN j.chunks AS chunks
