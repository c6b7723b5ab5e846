// Running attribution jobs written before jobs had chunks (no j.chunks): what a process gives
// chunks to when its takers start (attribution_jobs/chunk_job). Active jobs only, found through
// the attribution_job_active constraint's index (a running job holds active_project).
// $params: none
MATCH (j:AttributionJob)
WHERE j.active_project IS NOT NULL AND j.status = 'running' AND j.chunks IS NULL
RETURN j.project AS project, j.id AS id
