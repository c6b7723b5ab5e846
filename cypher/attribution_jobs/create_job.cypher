// Creates a running attribution job covering every failed case the project has now (the cases
// are fixed at the start: a case added later is not part of the job). Holding active_project,
// it fails on the attribution_job_active constraint when the project has an active job.
// $params: project (string), job_id (string), runner (string: the process running it),
//          judge (string), refresh (bool), max_llm_calls (int or null)
CREATE (j:AttributionJob {
  project: $project, id: $job_id, active_project: $project, status: 'running',
  runner: $runner, judge: $judge, refresh: $refresh, max_llm_calls: $max_llm_calls,
  created_at: datetime(), heartbeat_at: datetime()
})
WITH j
CALL (j) {
  MATCH (c:Case {project: $project, verdict: 'failed'})
  CREATE (j)-[:COVERS]->(c)
  RETURN count(c) AS total
}
SET j.total = total
RETURN j.id AS id
