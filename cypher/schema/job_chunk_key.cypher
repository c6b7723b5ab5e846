// Uniqueness of (project, job_id, seq) for attribution job chunks; a taker reads and renews its
// chunk by it.
// $params: none
CREATE CONSTRAINT job_chunk_key IF NOT EXISTS
FOR (k:JobChunk) REQUIRE (k.project, k.job_id, k.seq) IS UNIQUE
