// Finds the chunks free to take (attribution_jobs/take_chunk): free_at has passed. Done and
// stopped chunks carry no free_at, so the index holds only chunks that are or will be taken.
// $params: none
CREATE INDEX job_chunk_free IF NOT EXISTS FOR (k:JobChunk) ON (k.free_at)
