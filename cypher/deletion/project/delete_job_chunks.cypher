// Deletes up to $batch attribution job chunks of a project being deleted, with their
// relationships; run until it deletes nothing (DELETE /project, one label after another). The
// seek on the job_chunk_key index ((project, job_id, seq), hence the IS NOT NULLs) reads
// only this project's nodes.
// $params: project (string), batch (integer)
MATCH (n:JobChunk {project: $project})
WHERE n.job_id IS NOT NULL AND n.seq IS NOT NULL
WITH n LIMIT $batch
DETACH DELETE n
RETURN count(*) AS deleted
